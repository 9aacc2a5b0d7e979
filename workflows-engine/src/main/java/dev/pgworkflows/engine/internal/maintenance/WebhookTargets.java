package dev.pgworkflows.engine.internal.maintenance;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Which addresses webhooks may reach. Anyone who may subscribe chooses a URL, so without this a
 * subscription is a way to make the server POST to its own loopback, to the cloud metadata service
 * at 169.254.169.254 or into the private network behind it. Loopback, unspecified, link-local,
 * private (RFC 1918), shared (carrier-grade NAT), unique-local, site-local, multicast and reserved
 * addresses are refused, also when an IPv6 address embeds one (IPv4-mapped, IPv4-compatible, NAT64,
 * 6to4), unless the allow-list ({@code WORKFLOWS_WEBHOOK_ALLOW}) names them: by address or CIDR
 * range, or by the URL's host name (a name on the list is trusted whatever it resolves to).
 *
 * <p>A host is checked after resolution, every address it resolves to, and the caller connects only
 * to the addresses {@link #vet} returned: a second lookup could answer differently (DNS rebinding).
 */
public final class WebhookTargets {
  /** Looks a host up: the system's resolver, or a test's. */
  @FunctionalInterface
  public interface Resolver {
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  /** A host webhooks may not reach; the message says which address and why. */
  public static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }

  // Before REFUSED, which parses with it.
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern NAME = Pattern.compile("[a-z0-9_]([a-z0-9_.-]{0,252})");

  /** What is refused, in the words of error messages and the docs. */
  public static final String REFUSED_KINDS =
      "loopback, link-local, private, shared, unique-local, multicast or reserved addresses";

  private static final List<Cidr> REFUSED =
      List.of(
          Cidr.parse("0.0.0.0/8", "an unspecified (\"this network\") address"),
          Cidr.parse("127.0.0.0/8", "a loopback address"),
          Cidr.parse("10.0.0.0/8", "a private address"),
          Cidr.parse("172.16.0.0/12", "a private address"),
          Cidr.parse("192.168.0.0/16", "a private address"),
          Cidr.parse("169.254.0.0/16", "a link-local address"),
          Cidr.parse("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
          Cidr.parse("224.0.0.0/4", "a multicast address"),
          Cidr.parse("240.0.0.0/4", "a reserved or broadcast address"),
          Cidr.parse("::/128", "an unspecified address"),
          Cidr.parse("::1/128", "a loopback address"),
          Cidr.parse("fe80::/10", "a link-local address"),
          Cidr.parse("fec0::/10", "a site-local address"),
          Cidr.parse("fc00::/7", "a unique-local address"),
          Cidr.parse("ff00::/8", "a multicast address"));

  private final List<Cidr> allowedRanges;
  private final Set<String> allowedNames;
  private final Resolver resolver;

  private WebhookTargets(List<Cidr> allowedRanges, Set<String> allowedNames, Resolver resolver) {
    this.allowedRanges = allowedRanges;
    this.allowedNames = allowedNames;
    this.resolver = resolver;
  }

  /**
   * A policy with this allow-list: each entry an address ({@code 127.0.0.1}, {@code ::1}), a CIDR
   * range ({@code 10.1.2.0/24}, {@code fd00::/8}) or a host name ({@code localhost}).
   *
   * @throws IllegalArgumentException naming the entry that is none of these
   */
  public static WebhookTargets allowing(List<String> allowList, Resolver resolver) {
    List<Cidr> ranges = new ArrayList<>();
    Set<String> names = new TreeSet<>();
    for (String raw : allowList) {
      String e = raw.strip().toLowerCase(Locale.ROOT);
      if (e.contains("/") || e.contains(":") || IPV4.matcher(e).matches()) {
        ranges.add(Cidr.parse(e.replace("[", "").replace("]", ""), "allowed"));
      } else if (NAME.matcher(hostName(e)).matches()) {
        names.add(hostName(e));
      } else {
        throw new IllegalArgumentException(
            "\"" + raw + "\" is not an address, a CIDR range or a host name");
      }
    }
    return new WebhookTargets(List.copyOf(ranges), Set.copyOf(names), resolver);
  }

  /**
   * The addresses of {@code host} (a URL's host: a name, an IPv4 literal or a bracketed IPv6 one)
   * that a webhook may connect to: all of them, or a refusal if any is refused and not allowed.
   *
   * @throws UnknownHostException when the host does not resolve
   * @throws Refused when one of its addresses may not be reached
   */
  public List<InetAddress> vet(String host) throws UnknownHostException, Refused {
    String bare =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    InetAddress[] addresses = resolver.resolve(bare);
    if (addresses.length == 0) {
      throw new UnknownHostException(bare);
    }
    if (allowedNames.contains(hostName(bare))) {
      return List.of(addresses);
    }
    for (InetAddress a : addresses) {
      String why = refusal(a);
      if (why != null && allowedRanges.stream().noneMatch(r -> r.contains(a))) {
        throw new Refused(
            isLiteral(bare)
                ? bare + " is " + why
                : "\"" + bare + "\" resolves to " + a.getHostAddress() + ", " + why);
      }
    }
    return List.of(addresses);
  }

  /** Whether a host (without brackets) is an IP address literal rather than a name. */
  static boolean isLiteral(String host) {
    return host.contains(":") || IPV4.matcher(host).matches();
  }

  /** Why webhooks may not reach {@code a} by default ("a loopback address"), or null. */
  static String refusal(InetAddress a) {
    byte[] b = a.getAddress();
    if (a instanceof Inet6Address) {
      byte[] v4 = embeddedIpv4(b);
      if (v4 != null) {
        String why = refusal(v4Address(v4));
        return why == null ? null : why + " (inside an IPv6 address)";
      }
    }
    for (Cidr c : REFUSED) {
      if (c.contains(b)) {
        return c.label;
      }
    }
    return null;
  }

  /** The IPv4 address an IPv6 one carries: mapped, compatible, NAT64 or 6to4; else null. */
  private static byte[] embeddedIpv4(byte[] b) {
    boolean zeros80 = allZero(b, 0, 10);
    boolean mapped = zeros80 && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
    // ::a.b.c.d, but not :: and ::1, which are addresses of their own.
    boolean compatible =
        zeros80 && b[10] == 0 && b[11] == 0 && !(allZero(b, 12, 15) && (b[15] & 0xff) <= 1);
    boolean nat64 =
        b[0] == 0
            && b[1] == 0x64
            && (b[2] & 0xff) == 0xff
            && (b[3] & 0xff) == 0x9b
            && allZero(b, 4, 12);
    if (mapped || compatible || nat64) {
      return Arrays.copyOfRange(b, 12, 16);
    }
    if (b[0] == 0x20 && b[1] == 0x02) {
      return Arrays.copyOfRange(b, 2, 6);
    }
    return null;
  }

  private static boolean allZero(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return true;
  }

  private static InetAddress v4Address(byte[] v4) {
    try {
      return InetAddress.getByAddress(v4);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String hostName(String host) {
    String h = host.toLowerCase(Locale.ROOT);
    return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
  }

  /** An address range: a network's bytes and how many leading bits of it count. */
  private static final class Cidr {
    private final byte[] network;
    private final int prefix;
    private final String label;

    private Cidr(byte[] network, int prefix, String label) {
      this.network = network;
      this.prefix = prefix;
      this.label = label;
    }

    /**
     * Parses {@code address/prefix}, or an address alone (the range of just it), where the address
     * is a literal: never looked up.
     */
    static Cidr parse(String cidr, String label) {
      int slash = cidr.indexOf('/');
      String addr = slash < 0 ? cidr : cidr.substring(0, slash);
      boolean v4 = IPV4.matcher(addr).matches();
      if (v4
          ? Arrays.stream(addr.split("\\.")).anyMatch(o -> Integer.parseInt(o) > 255)
          : !addr.contains(":")) {
        throw new IllegalArgumentException("\"" + cidr + "\" is not an address range");
      }
      byte[] network;
      int prefix;
      try {
        // A literal: getByName parses it without a lookup.
        network = InetAddress.getByName(addr).getAddress();
        prefix = slash < 0 ? network.length * 8 : Integer.parseInt(cidr.substring(slash + 1));
      } catch (UnknownHostException | NumberFormatException e) {
        throw new IllegalArgumentException("\"" + cidr + "\" is not an address range", e);
      }
      if (prefix < 0 || prefix > network.length * 8) {
        throw new IllegalArgumentException("\"" + cidr + "\" has a prefix longer than its address");
      }
      return new Cidr(network, prefix, label);
    }

    boolean contains(InetAddress a) {
      return contains(a.getAddress());
    }

    boolean contains(byte[] b) {
      if (b.length != network.length) {
        return false;
      }
      for (int bit = 0; bit < prefix; bit += 8) {
        int bits = Math.min(8, prefix - bit);
        int mask = (0xff << (8 - bits)) & 0xff;
        if ((b[bit / 8] & mask) != (network[bit / 8] & mask)) {
          return false;
        }
      }
      return true;
    }
  }
}
