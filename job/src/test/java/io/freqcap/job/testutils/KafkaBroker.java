package io.freqcap.job.testutils;

import io.freqcap.job.local.EmbeddedKafka;
import io.freqcap.job.local.LocalKafka;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A Kafka broker (KRaft, in the test's JVM) for all tests of a class: {@code @RegisterExtension
 * static final KafkaBroker kafka = new KafkaBroker();}. Started before the first test, stopped
 * after the last; each test uses topics of its own.
 */
public final class KafkaBroker implements LocalKafka, BeforeAllCallback, AfterAllCallback {
    private EmbeddedKafka broker;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        broker = EmbeddedKafka.start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        close();
    }

    @Override
    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    @Override
    public void close() throws Exception {
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }
}
