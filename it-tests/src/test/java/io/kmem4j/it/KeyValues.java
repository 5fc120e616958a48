package io.kmem4j.it;

import java.util.LinkedHashMap;
import java.util.Map;

/** Parses the {@code key=value} tokens of an output line such as {@code echo: messages=3 verified=true}. */
public final class KeyValues {

    private KeyValues() {
    }

    public static Map<String, String> parse(String line) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String token : line.trim().split("\\s+")) {
            int eq = token.indexOf('=');
            if (eq > 0) {
                values.put(token.substring(0, eq), token.substring(eq + 1));
            }
        }
        return values;
    }
}
