package dev.pgworkflows.engine.internal.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.junit.jupiter.api.Test;

class WebhookTargetsTest {
  private static final WebhookTargets.Resolver LITERALS = InetAddress::getAllByName;

  @Test
  void internalRangesAreRefusedAndPublicOnesAreNot() throws Exception {
    assertThat(refusal("127.0.0.1")).isEqualTo("a loopback address");
    assertThat(refusal("127.255.0.9")).isEqualTo("a loopback address");
    assertThat(refusal("0.0.0.0")).contains("unspecified");
    assertThat(refusal("169.254.169.254")).isEqualTo("a link-local address");
    assertThat(refusal("10.200.0.1")).isEqualTo("a private address");
    assertThat(refusal("172.16.0.1")).isEqualTo("a private address");
    assertThat(refusal("172.31.255.255")).isEqualTo("a private address");
    assertThat(refusal("192.168.0.1")).isEqualTo("a private address");
    assertThat(refusal("100.64.0.1")).contains("shared");
    assertThat(refusal("100.127.255.255")).contains("shared");
    assertThat(refusal("224.0.0.1")).isEqualTo("a multicast address");
    assertThat(refusal("255.255.255.255")).contains("broadcast");
    assertThat(refusal("::")).isEqualTo("an unspecified address");
    assertThat(refusal("::1")).isEqualTo("a loopback address");
    assertThat(refusal("fe80::1")).isEqualTo("a link-local address");
    assertThat(refusal("fc00::1")).isEqualTo("a unique-local address");
    assertThat(refusal("fd00:ec2::254")).isEqualTo("a unique-local address");
    assertThat(refusal("ff02::1")).isEqualTo("a multicast address");
    // IPv4 inside IPv6: mapped (the JDK makes it IPv4), compatible, NAT64 and 6to4.
    assertThat(refusal("::ffff:127.0.0.1")).isEqualTo("a loopback address");
    assertThat(refusal("::10.0.0.1")).startsWith("a private address");
    assertThat(refusal("64:ff9b::a9fe:a9fe")).startsWith("a link-local address");
    assertThat(refusal("2002:7f00:1::")).startsWith("a loopback address");

    assertThat(refusal("172.32.0.1")).isNull();
    assertThat(refusal("100.128.0.1")).isNull();
    assertThat(refusal("8.8.8.8")).isNull();
    assertThat(refusal("169.255.0.1")).isNull();
    assertThat(refusal("2606:4700::1111")).isNull();
    assertThat(refusal("64:ff9b::808:808")).isNull();
  }

  @Test
  void theAllowListTakesAddressesRangesAndNames() throws Exception {
    WebhookTargets t =
        WebhookTargets.allowing(
            List.of("127.0.0.1", " 10.1.2.0/24", "[fd00::1]", "fe80::/10", "Hooks.Internal."),
            host -> {
              if (host.equalsIgnoreCase("hooks.internal")) {
                return new InetAddress[] {InetAddress.getByName("192.168.7.7")};
              }
              return InetAddress.getAllByName(host);
            });
    assertThat(t.vet("127.0.0.1")).hasSize(1);
    assertThat(t.vet("10.1.2.200")).hasSize(1);
    assertThat(t.vet("[fd00::1]")).hasSize(1);
    assertThat(t.vet("[fe80::abcd]")).hasSize(1);
    assertThat(t.vet("HOOKS.internal"))
        .extracting(InetAddress::getHostAddress)
        .containsExactly("192.168.7.7");
    assertThatThrownBy(() -> t.vet("127.0.0.2"))
        .isInstanceOf(WebhookTargets.Refused.class)
        .hasMessage("127.0.0.2 is a loopback address");
    assertThatThrownBy(() -> t.vet("10.1.3.1")).hasMessage("10.1.3.1 is a private address");
    assertThatThrownBy(() -> t.vet("[fd00::2]")).hasMessage("fd00::2 is a unique-local address");
  }

  @Test
  void aNameIsRefusedWhenAnyOfItsAddressesIs() {
    WebhookTargets t =
        WebhookTargets.allowing(
            List.of(),
            host ->
                new InetAddress[] {
                  InetAddress.getByName("93.184.216.34"), InetAddress.getByName("10.0.0.7")
                });
    assertThatThrownBy(() -> t.vet("mixed.example"))
        .hasMessage("\"mixed.example\" resolves to 10.0.0.7, a private address");
  }

  @Test
  void anUnresolvableNameIsNotARefusal() {
    WebhookTargets t =
        WebhookTargets.allowing(
            List.of(),
            host -> {
              throw new UnknownHostException(host);
            });
    assertThatThrownBy(() -> t.vet("nowhere.example")).isInstanceOf(UnknownHostException.class);
  }

  @Test
  void badAllowListEntriesAreNamed() {
    for (String bad : List.of("10.0.0.0/33", "300.1.1.1", "fd00::/129", "10.0.0.0/x", "a b")) {
      assertThatThrownBy(() -> WebhookTargets.allowing(List.of(bad), LITERALS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(bad);
    }
  }

  private static String refusal(String literal) throws UnknownHostException {
    return WebhookTargets.refusal(InetAddress.getByName(literal));
  }
}
