package io.kmem4j.it.apps;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.function.IntFunction;

/**
 * Loads {@link LoadedWorker} through a child-first {@link URLClassLoader} (parent: the platform
 * class loader; classes of this application's package are defined by the child itself, from the
 * same location this class came from), checks that the worker really was defined by that loader,
 * and lets it allocate and verify {@value #BUFFERS} direct buffers.
 *
 * <p>Prints {@code child-first: ok loader=<loader class name>} and exits 0. With {@code --hold} it
 * then waits until stdin ends.
 */
public final class ChildFirstApp {

    static final int BUFFERS = 1000;

    private ChildFirstApp() {
    }

    /** Child-first: own classes of {@code io.kmem4j.it.apps} come from the URLs, everything else from the parent. */
    static final class ChildFirstLoader extends URLClassLoader {
        static {
            registerAsParallelCapable();
        }

        ChildFirstLoader(URL[] urls, ClassLoader parent) {
            super("child-first", urls, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("io.kmem4j.it.apps.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try {
                        c = findClass(name);
                    } catch (ClassNotFoundException notHere) {
                        c = super.loadClass(name, false);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        URL location = ChildFirstApp.class.getProtectionDomain().getCodeSource().getLocation();
        try (ChildFirstLoader loader = new ChildFirstLoader(new URL[] {location}, ClassLoader.getPlatformClassLoader())) {
            Class<?> workerClass = Class.forName("io.kmem4j.it.apps.LoadedWorker", true, loader);
            Object worker = workerClass.getConstructor().newInstance();
            if (worker.getClass().getClassLoader() != loader) {
                System.out.println("child-first: FAIL worker defined by " + worker.getClass().getClassLoader());
                System.exit(1);
            }
            if (workerClass == LoadedWorker.class) {
                System.out.println("child-first: FAIL worker class is the application loader's copy");
                System.exit(1);
            }
            @SuppressWarnings("unchecked")
            IntFunction<String> work = (IntFunction<String>) worker;
            String result = work.apply(BUFFERS);
            System.out.println("child-first: worker " + result);
            System.out.println("child-first: ok loader=" + loader.getClass().getName());
        }
        if (args.length > 0 && args[0].equals("--hold")) {
            System.out.println("child-first: holding");
            hold();
        }
    }

    private static void hold() throws IOException {
        while (System.in.read() >= 0) {
            // wait for EOF
        }
    }
}
