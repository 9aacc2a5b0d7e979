package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The total-queue check: a producer sends unique ids to a FIFO queue while three consumer JVMs
 * receive and delete, one of them SIGKILLed and restarted every second or so. Afterwards nothing
 * acknowledged is missing, nothing unexpected appears, duplicates are counted, and within each
 * group first deliveries come in send order.
 */
@Tag("reliability")
class TotalQueueTest {
  private static final int GROUPS = 10;
  private static final int MESSAGES = 2000;

  record Delivery(int group, int seq, long micros) {}

  @Test
  void nothingAcknowledgedIsLostWhileConsumersAreKilled(@TempDir Path dir) throws Exception {
    try (TestServer server = TestServer.start()) {
      Api api = server.api();
      api.put("/v1/queues/total", Map.of("fifo", true, "visibilityTimeoutSeconds", 2));
      int consumers = 3;
      Process[] procs = new Process[consumers];
      for (int i = 0; i < consumers; i++) {
        procs[i] = consumer(server, dir, i);
      }
      Set<String> acked = new HashSet<>();
      AtomicBoolean producing = new AtomicBoolean(true);
      Thread producer =
          new Thread(
              () -> {
                int[] next = new int[GROUPS];
                for (int n = 0; n < MESSAGES; n++) {
                  int g = n % GROUPS;
                  int seq = ++next[g];
                  Api.Response r =
                      api.post(
                          "/v1/queues/total/messages",
                          Map.of("body", Map.of("g", g, "seq", seq), "groupId", "g" + g));
                  if (r.status() == 201) {
                    synchronized (acked) {
                      acked.add(g + "/" + seq);
                    }
                  }
                }
                producing.set(false);
              });
      producer.start();
      Random random = new Random(42);
      int kills = 0;
      long drainDeadline = Long.MAX_VALUE;
      while (true) {
        Thread.sleep(700 + random.nextInt(600));
        if (producing.get() || kills < 5) {
          int victim = random.nextInt(consumers);
          ChildJvm.kill(procs[victim]);
          kills++;
          procs[victim] = consumer(server, dir, victim);
        } else {
          if (drainDeadline == Long.MAX_VALUE) {
            drainDeadline = System.currentTimeMillis() + 60_000;
          }
          long depth = api.get("/v1/queues/total").json().get("metrics").get("depth").asLong();
          if (depth == 0 || System.currentTimeMillis() > drainDeadline) {
            break;
          }
        }
      }
      for (Process p : procs) {
        ChildJvm.kill(p);
      }
      producer.join();

      List<Delivery> deliveries = new ArrayList<>();
      for (int i = 0; i < consumers; i++) {
        Path log = dir.resolve("consumer-" + i + ".log");
        if (Files.exists(log)) {
          for (String line : Files.readAllLines(log)) {
            String[] f = line.split(" ");
            if (f.length == 3) {
              deliveries.add(
                  new Delivery(
                      Integer.parseInt(f[0]), Integer.parseInt(f[1]), Long.parseLong(f[2])));
            }
          }
        }
      }
      // Whatever the consumers did not finish is still in the queue: drain it.
      Thread.sleep(2_500);
      long now = System.currentTimeMillis() * 1000;
      while (true) {
        var got =
            api.post("/v1/queues/total/messages/receive", Map.of("max", 100))
                .json()
                .get("messages");
        if (got.isEmpty()) {
          break;
        }
        for (var m : got) {
          deliveries.add(
              new Delivery(
                  m.get("body").get("g").asInt(), m.get("body").get("seq").asInt(), now++));
          api.delete("/v1/queues/total/messages/" + m.get("id").asLong());
        }
      }

      Set<String> seen = new HashSet<>();
      int duplicates = 0;
      deliveries.sort(Comparator.comparingLong(Delivery::micros));
      Map<Integer, Integer> lastFirst = new HashMap<>();
      for (Delivery d : deliveries) {
        String key = d.group() + "/" + d.seq();
        if (!seen.add(key)) {
          duplicates++;
          continue;
        }
        int previous = lastFirst.getOrDefault(d.group(), 0);
        assertThat(d.seq())
            .as("first deliveries of group %d in send order", d.group())
            .isGreaterThan(previous);
        lastFirst.put(d.group(), d.seq());
      }
      assertThat(seen).as("nothing acknowledged is lost").containsAll(acked);
      assertThat(acked).as("nothing unexpected appears").containsAll(seen);
      assertThat(acked).hasSize(MESSAGES);
      System.out.printf(
          "total queue: %d sent, %d delivered once or more, %d duplicate deliveries, %d consumer kills%n",
          acked.size(), seen.size(), duplicates, kills);
    }
  }

  private static Process consumer(TestServer server, Path dir, int i) throws Exception {
    return ChildJvm.start(
        QueueConsumerMain.class,
        dir.resolve("consumer-" + i + ".out"),
        Map.of(),
        server.url(),
        "total",
        dir.resolve("consumer-" + i + ".log").toString());
  }
}
