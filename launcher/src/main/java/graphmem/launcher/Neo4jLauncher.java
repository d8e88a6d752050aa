package graphmem.launcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.SettingImpl;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.graphdb.config.Setting;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilder;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Runs a Neo4j 5 Community server (Bolt, HTTP, Browser) in this JVM.
 *
 * The harness is built for tests and deletes its working folder on close, so the data
 * and transaction-log directories are pointed at a persistent folder and, on SIGTERM,
 * only the database service is shut down (never Neo4j#close, which would delete files).
 *
 * Arguments: --home DIR --bolt HOST:PORT --http HOST:PORT --password PW [--conf key=value]...
 */
public final class Neo4jLauncher {

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new LinkedHashMap<>();
        Map<String, String> extra = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            String key = args[i];
            String value = i + 1 < args.length ? args[i + 1] : "";
            if (key.equals("--conf")) {
                int eq = value.indexOf('=');
                extra.put(value.substring(0, eq), value.substring(eq + 1));
            } else {
                opts.put(key, value);
            }
        }
        Path home = Path.of(required(opts, "--home")).toAbsolutePath();
        Path data = home.resolve("data");
        Path work = home.resolve("run");
        Files.createDirectories(data);
        Files.createDirectories(work);

        Neo4jBuilder builder = Neo4jBuilders.newInProcessBuilder(work)
                .withConfig(GraphDatabaseSettings.data_directory, data)
                .withConfig(GraphDatabaseSettings.transaction_logs_root_path, data.resolve("transactions"))
                .withConfig(GraphDatabaseSettings.auth_enabled, true)
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, address(required(opts, "--bolt")))
                .withConfig(HttpConnector.enabled, true)
                .withConfig(HttpConnector.listen_address, address(required(opts, "--http")));

        // Any other setting by its neo4j.conf name, parsed by Neo4j's own setting parser.
        Map<String, Setting<Object>> declared = Config.newBuilder().build().getDeclaredSettings();
        for (Map.Entry<String, String> e : extra.entrySet()) {
            Setting<Object> setting = declared.get(e.getKey());
            if (setting == null) {
                throw new IllegalArgumentException("unknown Neo4j setting: " + e.getKey());
            }
            builder = builder.withConfig(setting, ((SettingImpl<Object>) setting).parse(e.getValue()));
        }

        Neo4j neo4j = builder.build();
        // The initial password of a new server is "neo4j" and must be changed; setting it on every
        // start also keeps it in step with NEO4J_PASSWORD.
        try {
            neo4j.databaseManagementService().database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", required(opts, "--password")));
        } catch (RuntimeException e) {
            // A restart with the same password: Neo4j refuses to "change" it to itself, which is fine.
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                neo4j.databaseManagementService().shutdown();
                throw e;
            }
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            neo4j.databaseManagementService().shutdown();
            stopped.countDown();
        }));
        System.out.println("graphmem-neo4j ready bolt=" + neo4j.boltURI() + " http=" + neo4j.httpURI());
        System.out.flush();
        stopped.await();
    }

    private static SocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new SocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    private static String required(Map<String, String> opts, String key) {
        String value = opts.get(key);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing " + key);
        }
        return value;
    }
}
