package io.freqcap.schema.edges;

/** What the fuzz tests report their failures with: the same words for the same failure. */
public final class FuzzReport {
    private FuzzReport() {}

    /**
     * The text with every character outside printable ASCII as a {@code \\u} escape: the test's
     * console (surefire's fork stream) loses what follows a character it cannot carry, and the
     * inputs are full of them.
     */
    public static String ascii(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c >= 0x20 && c < 0x7F) || c == '\n') {
                b.append(c);
            } else {
                b.append(String.format("\\u%04x", (int) c));
            }
        }
        return b.toString();
    }

    /**
     * An exception's class and the first freqcap frame of its root cause: failures of one bug share
     * it, whatever the input.
     */
    public static String signature(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String where = "?";
        for (StackTraceElement e : root.getStackTrace()) {
            if (e.getClassName().startsWith("io.freqcap.")) {
                String cls = e.getClassName().substring(e.getClassName().lastIndexOf('.') + 1);
                where = cls + "." + e.getMethodName();
                break;
            }
        }
        return root.getClass().getSimpleName() + " at " + where;
    }
}
