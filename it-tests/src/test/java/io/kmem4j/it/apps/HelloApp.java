package io.kmem4j.it.apps;

/** The smallest possible program, for start-up time measurements. */
public final class HelloApp {

    private HelloApp() {
    }

    public static void main(String[] args) {
        System.out.println("hello");
    }
}
