package io.kmem4j.it.apps;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;

/**
 * Loads some of its libraries the way fat-jar launchers and application servers do: through a
 * standard (parent-first) {@link URLClassLoader} whose parent is the system class loader. The jars
 * are the program arguments; the classes to load come after {@code --}. Prints one line per class:
 * {@code libraries: <class> loaded} or {@code libraries: <class> failed <throwable>}, then
 * {@code libraries: done}.
 */
public final class ParentFirstLibrariesApp {

    private ParentFirstLibrariesApp() {
    }

    public static void main(String[] args) throws Exception {
        int split = java.util.Arrays.asList(args).indexOf("--");
        if (split < 0) {
            throw new IllegalArgumentException("usage: <jar>... -- <class>...");
        }
        URL[] urls = new URL[split];
        for (int i = 0; i < split; i++) {
            urls[i] = Path.of(args[i]).toUri().toURL();
        }
        try (URLClassLoader libraries = new URLClassLoader("libraries", urls, ClassLoader.getSystemClassLoader())) {
            for (int i = split + 1; i < args.length; i++) {
                String name = args[i];
                try {
                    Class<?> c = Class.forName(name, true, libraries);
                    System.out.println("libraries: " + name + " loaded by " + c.getClassLoader().getName());
                } catch (ClassNotFoundException e) {
                    System.out.println("libraries: " + name + " not found");
                } catch (LinkageError e) {
                    System.out.println("libraries: " + name + " failed " + e);
                }
            }
        }
        System.out.println("libraries: done");
    }
}
