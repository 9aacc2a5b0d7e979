package dev.pgworkflows.engine.internal.search;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The filter language over runs, parsed by recursive descent into the tree {@code run_query_where}
 * (sql/functions/search_attributes.sql) turns into SQL with bound values:
 *
 * <pre>
 * query      = or
 * or         = and { "OR" and }
 * and        = unary { "AND" unary }
 * unary      = "NOT" unary | "(" or ")" | condition
 * condition  = name ( compare value | "IN" "(" value { "," value } ")" | "STARTS_WITH" string )
 * compare    = "=" | "!=" | "&lt;&gt;" | "&lt;" | "&lt;=" | "&gt;" | "&gt;="
 * value      = string | number | "TRUE" | "FALSE"
 * </pre>
 *
 * Keywords are case-insensitive; a string is single-quoted, a quote inside it doubled. A syntax
 * error is a 400 naming {@code query} and the position (1-based) where it was found. Names and the
 * types of values are checked by the database, against the fields of runs and the search attributes
 * defined.
 */
public final class RunQuery {
  /** Longer queries are refused before they are read. */
  public static final int MAX_LENGTH = 4000;

  private static final int MAX_CONDITIONS = 50;
  private static final int MAX_DEPTH = 20;
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final List<Token> tokens;
  private int at;
  private int conditions;

  private RunQuery(List<Token> tokens) {
    this.tokens = tokens;
  }

  /** The tree of a query, as JSON. */
  public static JsonNode parse(String text) {
    if (text == null || text.isBlank()) {
      throw ApiException.badRequest("query", "query must not be empty");
    }
    if (text.length() > MAX_LENGTH) {
      throw ApiException.badRequest(
          "query", "query is " + text.length() + " characters; at most " + MAX_LENGTH);
    }
    RunQuery p = new RunQuery(Lexer.tokens(text));
    JsonNode tree = p.or(0);
    Token end = p.peek();
    if (end.kind() != Kind.END) {
      throw p.error(end, "AND, OR or the end of the query");
    }
    return tree;
  }

  private JsonNode or(int depth) {
    List<JsonNode> parts = new ArrayList<>();
    parts.add(and(depth));
    while (keyword("OR")) {
      at++;
      parts.add(and(depth));
    }
    return joined("or", parts);
  }

  private JsonNode and(int depth) {
    List<JsonNode> parts = new ArrayList<>();
    parts.add(unary(depth));
    while (keyword("AND")) {
      at++;
      parts.add(unary(depth));
    }
    return joined("and", parts);
  }

  private static JsonNode joined(String op, List<JsonNode> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    ArrayNode all = NODES.arrayNode();
    for (JsonNode part : parts) {
      // a AND (b AND c) is one list
      if (part.has(op)) {
        all.addAll((ArrayNode) part.get(op));
      } else {
        all.add(part);
      }
    }
    ObjectNode node = NODES.objectNode();
    node.set(op, all);
    return node;
  }

  private JsonNode unary(int depth) {
    Token t = peek();
    if (depth > MAX_DEPTH) {
      throw error(t, "a query nested at most " + MAX_DEPTH + " deep");
    }
    if (keyword("NOT")) {
      at++;
      ObjectNode node = NODES.objectNode();
      node.set("not", unary(depth + 1));
      return node;
    }
    if (t.kind() == Kind.OPEN) {
      at++;
      JsonNode inner = or(depth + 1);
      expect(Kind.CLOSE, "')'");
      return inner;
    }
    return condition();
  }

  private JsonNode condition() {
    Token name = peek();
    if (name.kind() != Kind.NAME || isKeyword(name)) {
      throw error(name, "a field or search attribute name, NOT or '('");
    }
    if (++conditions > MAX_CONDITIONS) {
      throw error(name, "at most " + MAX_CONDITIONS + " conditions");
    }
    at++;
    ObjectNode node = NODES.objectNode();
    node.put("field", name.text());
    node.put("pos", name.pos());
    Token op = peek();
    if (op.kind() == Kind.COMPARE) {
      at++;
      node.put("op", op.text().equals("<>") ? "!=" : op.text());
      node.set("value", value());
    } else if (keyword("IN")) {
      at++;
      node.put("op", "in");
      expect(Kind.OPEN, "'(' after IN");
      ArrayNode values = node.putArray("values");
      values.add(value());
      while (peek().kind() == Kind.COMMA) {
        at++;
        values.add(value());
      }
      expect(Kind.CLOSE, "',' or ')'");
    } else if (keyword("STARTS_WITH")) {
      at++;
      node.put("op", "starts_with");
      Token s = peek();
      if (s.kind() != Kind.STRING) {
        throw error(s, "a quoted string after STARTS_WITH");
      }
      at++;
      node.put("value", s.text());
    } else {
      throw error(op, "=, !=, <, <=, >, >=, IN or STARTS_WITH after " + name.text());
    }
    return node;
  }

  private JsonNode value() {
    Token t = peek();
    at++;
    return switch (t.kind()) {
      case STRING -> NODES.textNode(t.text());
      case NUMBER -> NODES.numberNode(new BigDecimal(t.text()));
      case NAME -> {
        String word = t.text().toUpperCase(Locale.ROOT);
        if (word.equals("TRUE") || word.equals("FALSE")) {
          yield NODES.booleanNode(word.equals("TRUE"));
        }
        at--;
        throw error(t, "a value: a quoted string, a number, TRUE or FALSE");
      }
      default -> {
        at--;
        throw error(t, "a value: a quoted string, a number, TRUE or FALSE");
      }
    };
  }

  private void expect(Kind kind, String what) {
    Token t = peek();
    if (t.kind() != kind) {
      throw error(t, what);
    }
    at++;
  }

  private Token peek() {
    return tokens.get(at);
  }

  private boolean keyword(String word) {
    Token t = peek();
    return t.kind() == Kind.NAME && t.text().equalsIgnoreCase(word);
  }

  private static boolean isKeyword(Token t) {
    return switch (t.text().toUpperCase(Locale.ROOT)) {
      case "AND", "OR", "NOT", "IN", "STARTS_WITH", "TRUE", "FALSE" -> true;
      default -> false;
    };
  }

  private ApiException error(Token t, String expected) {
    String found = t.kind() == Kind.END ? "the end of the query" : "'" + t.text() + "'";
    return ApiException.badRequest(
        "query", "query at " + t.pos() + ": expected " + expected + ", found " + found);
  }

  enum Kind {
    NAME,
    STRING,
    NUMBER,
    COMPARE,
    OPEN,
    CLOSE,
    COMMA,
    END
  }

  /** A token and its 1-based position in the query. */
  record Token(Kind kind, String text, int pos) {}

  /** Splits a query into tokens; a character no token starts with is a 400 at its position. */
  static final class Lexer {
    private Lexer() {}

    static List<Token> tokens(String s) {
      List<Token> out = new ArrayList<>();
      int i = 0;
      while (i < s.length()) {
        char c = s.charAt(i);
        int pos = i + 1;
        if (Character.isWhitespace(c)) {
          i++;
        } else if (c == '(' || c == ')' || c == ',') {
          out.add(
              new Token(c == '(' ? Kind.OPEN : c == ')' ? Kind.CLOSE : Kind.COMMA, "" + c, pos));
          i++;
        } else if (c == '\'') {
          StringBuilder text = new StringBuilder();
          int j = i + 1;
          while (true) {
            if (j >= s.length()) {
              throw ApiException.badRequest(
                  "query", "query at " + pos + ": a string not closed by a quote");
            }
            char d = s.charAt(j);
            if (d == '\'') {
              if (j + 1 < s.length() && s.charAt(j + 1) == '\'') {
                text.append('\'');
                j += 2;
                continue;
              }
              break;
            }
            text.append(d);
            j++;
          }
          out.add(new Token(Kind.STRING, text.toString(), pos));
          i = j + 1;
        } else if (c == '=' || c == '!' || c == '<' || c == '>') {
          String two = i + 1 < s.length() ? s.substring(i, i + 2) : "";
          String op =
              switch (two) {
                case "!=", "<>", "<=", ">=" -> two;
                default -> c == '!' ? null : "" + c;
              };
          if (op == null) {
            throw ApiException.badRequest(
                "query", "query at " + pos + ": '!' is only part of '!='");
          }
          out.add(new Token(Kind.COMPARE, op, pos));
          i += op.length();
        } else if (c == '-' || Character.isDigit(c)) {
          int j = i + 1;
          while (j < s.length()
              && (Character.isDigit(s.charAt(j))
                  || s.charAt(j) == '.'
                  || s.charAt(j) == 'e'
                  || s.charAt(j) == 'E'
                  || ((s.charAt(j) == '-' || s.charAt(j) == '+')
                      && (s.charAt(j - 1) == 'e' || s.charAt(j - 1) == 'E')))) {
            j++;
          }
          String number = s.substring(i, j);
          if (!number.matches("-?\\d+(\\.\\d+)?([eE][-+]?\\d+)?")) {
            throw ApiException.badRequest(
                "query", "query at " + pos + ": '" + number + "' is not a number");
          }
          out.add(new Token(Kind.NUMBER, number, pos));
          i = j;
        } else if (Character.isLetter(c) || c == '_') {
          int j = i + 1;
          while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
            j++;
          }
          out.add(new Token(Kind.NAME, s.substring(i, j), pos));
          i = j;
        } else {
          throw ApiException.badRequest(
              "query", "query at " + pos + ": unexpected character '" + c + "'");
        }
      }
      out.add(new Token(Kind.END, "", s.length() + 1));
      return out;
    }
  }
}
