package io.freqcap.job.testutils;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate for {@code localhost} and {@code 127.0.0.1}, made by the JDK's keytool:
 * as PKCS12 key and trust stores (for Kafka) and as PEM certificate and PKCS#8 key (for Redis).
 */
public record TestCertificates(
        Path keystore, Path truststore, Path certificate, Path key, String password) {

    public static TestCertificates create(Path dir) throws Exception {
        Files.createDirectories(dir);
        String password = "store-" + UUID.randomUUID();
        Path keystore = dir.resolve("server.p12");
        Path truststore = dir.resolve("truststore.p12");
        Path cert = dir.resolve("server.pem");
        keytool(
                dir,
                "-genkeypair",
                "-alias",
                "server",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=dns:localhost,ip:127.0.0.1",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                keystore.toString(),
                "-storepass",
                password,
                "-keypass",
                password);
        keytool(
                dir,
                "-exportcert",
                "-rfc",
                "-alias",
                "server",
                "-keystore",
                keystore.toString(),
                "-storepass",
                password,
                "-file",
                cert.toString());
        keytool(
                dir,
                "-importcert",
                "-noprompt",
                "-alias",
                "server",
                "-file",
                cert.toString(),
                "-storetype",
                "PKCS12",
                "-keystore",
                truststore.toString(),
                "-storepass",
                password);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, password.toCharArray());
        }
        byte[] pkcs8 = ks.getKey("server", password.toCharArray()).getEncoded();
        Path key =
                Files.writeString(
                        dir.resolve("server.key"),
                        "-----BEGIN PRIVATE KEY-----\n"
                                + Base64.getMimeEncoder(
                                                64, "\n".getBytes(StandardCharsets.US_ASCII))
                                        .encodeToString(pkcs8)
                                + "\n-----END PRIVATE KEY-----\n");
        return new TestCertificates(keystore, truststore, cert, key, password);
    }

    /** Sockets that trust this certificate only. */
    public SSLSocketFactory clientSockets() throws Exception {
        KeyStore ts = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(truststore)) {
            ts.load(in, password.toCharArray());
        }
        TrustManagerFactory tmf =
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx.getSocketFactory();
    }

    private static void keytool(Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Path log = dir.resolve("keytool.log");
        Process k =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        if (k.waitFor() != 0) {
            throw new IOException("keytool failed: " + Files.readString(log));
        }
    }
}
