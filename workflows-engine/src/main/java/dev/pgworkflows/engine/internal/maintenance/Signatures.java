package dev.pgworkflows.engine.internal.maintenance;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Webhook signatures: {@code v1=<hex HMAC-SHA256(secret, id + "." + timestamp + "." + body)>}.
 * Receivers recompute it from the {@code Webhook-Id}, {@code Webhook-Timestamp} headers and the raw
 * body, compare in constant time, and reject stale timestamps to stop replays.
 */
public final class Signatures {
  private Signatures() {}

  public static String sign(String secret, String id, long timestampSeconds, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update((id + "." + timestampSeconds + ".").getBytes(StandardCharsets.UTF_8));
      return "v1=" + HexFormat.of().formatHex(mac.doFinal(body));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
    }
  }
}
