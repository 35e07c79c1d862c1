// Sets configurations of a topic on the test broker through the Admin API of the kafka-clients jar
// the broker runs (kafka-configs.sh lives in the kafka-tools jar, which the broker does not need),
// then prints each key given with the value the broker now reports. Run as a source file by the
// JRE's launcher (Java 11+), with the broker's jars on the class path:
//   java -cp "$(fetch-kafka.sh)/*" TopicConfig.java BOOTSTRAP TOPIC KEY=VALUE...
// Exit 1 when the broker refuses a value or reports another one.
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

public class TopicConfig {
  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: TopicConfig BOOTSTRAP TOPIC KEY=VALUE...");
      System.exit(2);
    }
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, args[1]);
    List<AlterConfigOp> ops = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      ops.add(new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
    }
    try (Admin admin = Admin.create(props)) {
      admin.incrementalAlterConfigs(Map.of(topic, ops)).all().get();
      Config now = admin.describeConfigs(List.of(topic)).all().get().get(topic);
      int wrong = 0;
      for (AlterConfigOp op : ops) {
        String key = op.configEntry().name();
        String value = now.get(key) == null ? null : now.get(key).value();
        System.out.println(args[1] + " " + key + "=" + value);
        if (!same(op.configEntry().value(), value)) wrong++;
      }
      System.exit(wrong == 0 ? 0 : 1);
    }
  }

  // The broker reports 0 as 0.0 for a number it reads as a double.
  static boolean same(String given, String reported) {
    if (given.equals(reported)) return true;
    try {
      return reported != null && Double.parseDouble(given) == Double.parseDouble(reported);
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
