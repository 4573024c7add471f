package io.freqcap.job.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.CommandLine;
import io.freqcap.job.FreqcapMain;
import io.freqcap.job.FreqcapOptions;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.metrics.prometheus.PrometheusPushGatewayReporterOptions;
import org.apache.flink.metrics.prometheus.PrometheusReporterFactory;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * {@code deploy/kubernetes}: the FlinkDeployment checked against the Flink Kubernetes Operator's
 * own CRD schema (every field known, of the right type, enums respected), its Flink settings
 * against Flink's options, its arguments against the job's, and its jar against the Dockerfile. No
 * cluster runs it here.
 *
 * <p>The CRD comes from {@code flink-kubernetes-operator-api} 1.10.0, the newest on Maven Central
 * from this machine; it predates Flink 2, so its {@code flinkVersion} enum stops at {@code v1_20}.
 * That one field is checked against {@code v2_2}, the value operators 1.13 and later take for the
 * Flink 2.2 image the Dockerfile builds on.
 */
class KubernetesManifestTest {
    static final Path DIR = Path.of("..", "deploy", "kubernetes");

    @SuppressWarnings("unchecked")
    static Map<String, Object> yaml(String text) {
        return (Map<String, Object>) new Load(LoadSettings.builder().build()).loadFromString(text);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    static Map<String, Object> manifest() throws Exception {
        return yaml(Files.readString(DIR.resolve("flinkdeployment.yaml")));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> crdSchema(String version) throws Exception {
        try (InputStream in =
                KubernetesManifestTest.class
                        .getClassLoader()
                        .getResourceAsStream(
                                // the CRD in apiextensions.k8s.io/v1 form
                                "META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml")) {
            Map<String, Object> crd = yaml(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            for (Object v : (List<Object>) map(crd.get("spec")).get("versions")) {
                if (version.equals(map(v).get("name"))) {
                    return map(map(map(v).get("schema")).get("openAPIV3Schema"));
                }
            }
            throw new AssertionError("no version " + version + " in the CRD");
        }
    }

    static Map<String, Object> spec(Map<String, Object> schema) {
        return map(map(schema.get("properties")).get("spec"));
    }

    /** Every field of {@code node} known to {@code schema}, of its type, within its enum. */
    @SuppressWarnings("unchecked")
    static void conforms(
            Object node, Map<String, Object> schema, String path, List<String> errors) {
        String type = (String) schema.get("type");
        if (schema.containsKey("enum")
                && !path.equals(".spec.flinkVersion")
                && !((List<Object>) schema.get("enum")).contains(node)) {
            errors.add(path + ": " + node + " not one of " + schema.get("enum"));
        }
        if ("object".equals(type)) {
            if (!(node instanceof Map)) {
                errors.add(path + ": not an object");
                return;
            }
            Map<String, Object> props = (Map<String, Object>) schema.get("properties");
            Object additional = schema.get("additionalProperties");
            for (Map.Entry<String, Object> e : ((Map<String, Object>) node).entrySet()) {
                String p = path + "." + e.getKey();
                if (props != null && props.containsKey(e.getKey())) {
                    conforms(e.getValue(), map(props.get(e.getKey())), p, errors);
                } else if (additional instanceof Map) {
                    conforms(e.getValue(), map(additional), p, errors);
                } else if (!Boolean.TRUE.equals(
                        schema.get("x-kubernetes-preserve-unknown-fields"))) {
                    errors.add(p + ": not a field of the CRD");
                }
            }
        } else if ("array".equals(type)) {
            if (!(node instanceof List)) {
                errors.add(path + ": not an array");
                return;
            }
            int i = 0;
            for (Object item : (List<Object>) node) {
                conforms(item, map(schema.get("items")), path + "[" + i++ + "]", errors);
            }
        } else if ("string".equals(type) && !(node instanceof String)) {
            errors.add(path + ": not a string (quote it): " + node);
        } else if ("integer".equals(type) && !(node instanceof Number)) {
            errors.add(path + ": not an integer: " + node);
        } else if ("boolean".equals(type) && !(node instanceof Boolean)) {
            errors.add(path + ": not a boolean: " + node);
        }
    }

    @Test
    void theFlinkDeploymentConformsToTheOperatorsCrd() throws Exception {
        Map<String, Object> m = manifest();
        assertEquals("flink.apache.org/v1beta1", m.get("apiVersion"));
        assertEquals("FlinkDeployment", m.get("kind"));
        // apiVersion, kind and metadata are every Kubernetes object's; the CRD schemas the rest
        List<String> errors = new ArrayList<>();
        conforms(m.get("spec"), spec(crdSchema("v1beta1")), ".spec", errors);
        assertEquals(List.of(), errors);
        // A deliberate mistake is caught: the check is not vacuous.
        Map<String, Object> broken = manifest();
        map(map(broken.get("spec")).get("job")).put("upgradeMode", "snapshot");
        map(broken.get("spec")).put("taskManagers", 2);
        List<String> found = new ArrayList<>();
        conforms(broken.get("spec"), spec(crdSchema("v1beta1")), ".spec", found);
        assertEquals(2, found.size(), found.toString());
    }

    @Test
    void itRunsTheJobJarOfTheImageFromASavepointOnS3WithHa() throws Exception {
        Map<String, Object> spec = map(manifest().get("spec"));
        assertEquals("v2_2", spec.get("flinkVersion"));
        Map<String, Object> job = map(spec.get("job"));
        assertEquals("savepoint", job.get("upgradeMode"));
        assertEquals(FreqcapMain.class.getName(), job.get("entryClass"));
        String dockerfile = Files.readString(DIR.resolve("Dockerfile"));
        assertTrue(dockerfile.contains("\nFROM flink:2.2."), "the Flink 2.2 image");
        assertTrue(dockerfile.contains("-java17"), "Java 17");
        String jarPath = ((String) job.get("jarURI")).replace("local://", "");
        assertTrue(
                dockerfile.contains(" " + jarPath + "\n"),
                "the Dockerfile puts the jar at " + jarPath);
        Map<String, Object> conf = map(spec.get("flinkConfiguration"));
        assertEquals("rocksdb", conf.get("state.backend.type"));
        assertEquals("kubernetes", conf.get("high-availability.type"));
        for (String key :
                List.of(
                        "execution.checkpointing.dir",
                        "execution.checkpointing.savepoint-dir",
                        "high-availability.storageDir")) {
            assertTrue(((String) conf.get(key)).startsWith("s3://"), key + " on S3");
        }
    }

    @Test
    void itsFlinkSettingsAreFlinkOptions() throws Exception {
        Set<String> known = new HashSet<>();
        for (Class<?> c :
                List.of(
                        CheckpointingOptions.class,
                        StateBackendOptions.class,
                        HighAvailabilityOptions.class,
                        RestartStrategyOptions.class,
                        TaskManagerOptions.class,
                        CoreOptions.class)) {
            for (Field f : c.getFields()) {
                if (Modifier.isStatic(f.getModifiers())
                        && f.get(null) instanceof ConfigOption<?> o) {
                    known.add(o.key());
                    for (FallbackKey k : o.fallbackKeys()) {
                        known.add(k.getKey());
                    }
                }
            }
        }
        // a reporter's keys: Flink's reporter options, and the Prometheus reporter's own
        Set<String> reporter = new HashSet<>();
        for (Class<?> c :
                List.of(
                        MetricOptions.class,
                        PrometheusReporterFactory.class,
                        PrometheusPushGatewayReporterOptions.class)) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()) {
                    f.setAccessible(true); // the factory's port key is package-private
                    Object v = f.get(null);
                    if (v instanceof ConfigOption<?> o) {
                        reporter.add(o.key());
                    } else if (v instanceof String s) {
                        reporter.add(s);
                    }
                }
            }
        }
        String prom = "metrics.reporter.prom.";
        Map<String, Object> conf = map(map(manifest().get("spec")).get("flinkConfiguration"));
        for (String key : conf.keySet()) {
            if (key.startsWith(prom)) {
                assertTrue(
                        reporter.contains(key.substring(prom.length())),
                        key + " is no reporter option");
            } else {
                assertTrue(known.contains(key), key + " is no Flink option");
            }
        }
        assertEquals(PrometheusReporterFactory.class.getName(), conf.get(prom + "factory.class"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void itsArgumentsAreOptionsTheJobAccepts() throws Exception {
        Map<String, Object> job = map(map(manifest().get("spec")).get("job"));
        List<String> args = (List<String>) job.get("args");
        Configuration options = CommandLine.parse(args.toArray(new String[0]), List.of());
        assertEquals(job.get("parallelism"), options.get(FreqcapOptions.PARALLELISM));
        assertTrue(options.getOptional(FreqcapOptions.BOOTSTRAP_SERVERS).isPresent());
        assertTrue(options.get(FreqcapOptions.LIMITS).startsWith("s3://"));
    }
}
