package io.freqcap.schema.edges;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** A JSON object being written field by field, each with what the contract says of it. */
final class Obj {
    private final List<String[]> fields = new ArrayList<>();
    private Validity validity = Validity.VALID;
    private String why;

    /** Adds a field (none when {@code v} is absent) and what the contract says of it. */
    Obj put(String name, Value v) {
        worse(v.validity(), v.why() == null ? name : name + "." + v.why());
        if (!v.absent()) {
            fields.add(new String[] {name, v.json()});
        }
        return this;
    }

    /** What the contract says of the whole object, past what its fields say, and why. */
    Obj and(Validity v, String because) {
        worse(v, because);
        return this;
    }

    private void worse(Validity v, String because) {
        Validity next = validity.and(v);
        if (next != validity) {
            why = because; // the first reason for the worst
        }
        validity = next;
    }

    Validity validity() {
        return validity;
    }

    boolean has(String name) {
        for (String[] f : fields) {
            if (f[0].equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** The object's text; its fields in a random order sometimes, with spaces sometimes. */
    String json(Random r) {
        List<String[]> order = new ArrayList<>(fields);
        if (r.nextInt(4) == 0) {
            Collections.shuffle(order, r);
        }
        String sep = r.nextInt(6) == 0 ? ", " : ",";
        String colon = r.nextInt(6) == 0 ? " : " : ":";
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < order.size(); i++) {
            if (i > 0) {
                b.append(sep);
            }
            b.append(EdgeValues.quote(order.get(i)[0], false)).append(colon);
            b.append(order.get(i)[1]);
        }
        return b.append('}').toString();
    }

    String why() {
        return why;
    }

    Value value(Random r) {
        return new Value(json(r), validity, why);
    }
}
