package dev.pgworkflows.reliability;

import java.io.FileOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A consumer in its own JVM: receives from a FIFO queue, appends each delivery to a log (synced to
 * disk) and only then deletes it. Killed at random by the test.
 */
public final class QueueConsumerMain {
  private static final Pattern MESSAGE =
      Pattern.compile("\"id\":(\\d+).*?\"body\":\\{\"g\": (\\d+), \"seq\": (\\d+)\\}");

  private QueueConsumerMain() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String queue = args[1];
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (FileOutputStream log = new FileOutputStream(args[2], true)) {
      while (true) {
        String body;
        try {
          body =
              http.send(
                      HttpRequest.newBuilder(
                              URI.create(url + "/v1/queues/" + queue + "/messages/receive"))
                          .header("Authorization", "Bearer t")
                          .header("Content-Type", "application/json")
                          .POST(
                              HttpRequest.BodyPublishers.ofString(
                                  "{\"max\":10,\"waitSeconds\":1,\"visibilityTimeoutSeconds\":2}"))
                          .build(),
                      HttpResponse.BodyHandlers.ofString())
                  .body();
        } catch (java.io.IOException e) {
          Thread.sleep(100);
          continue;
        }
        Matcher m = MESSAGE.matcher(body);
        while (m.find()) {
          Instant now = Instant.now();
          long micros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
          String line = m.group(2) + " " + m.group(3) + " " + micros + "\n";
          log.write(line.getBytes(StandardCharsets.UTF_8));
          log.getFD().sync();
          http.send(
              HttpRequest.newBuilder(
                      URI.create(url + "/v1/queues/" + queue + "/messages/" + m.group(1)))
                  .header("Authorization", "Bearer t")
                  .DELETE()
                  .build(),
              HttpResponse.BodyHandlers.discarding());
        }
      }
    }
  }
}
