package dev.pgworkflows.protocol;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import java.io.IOException;

/**
 * Reads any JSON value as its JSON text: the reading side of {@code @JsonRawValue}. The server
 * passes inputs, outputs and journals through as the text the database holds, unparsed; a reader of
 * the same records gets that text back and parses it into whatever type it wants. A JSON {@code
 * null} reads as the text {@code "null"}, and an absent field as null, so a record read and written
 * again comes out the same.
 */
public final class RawJson extends StdDeserializer<String> {
  private static final long serialVersionUID = 1L;

  public RawJson() {
    super(String.class);
  }

  @Override
  public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
    return ctxt.readTree(p).toString();
  }

  @Override
  public String getNullValue(DeserializationContext ctxt) {
    return "null";
  }

  /** A field that is absent stays null: it is written absent again. */
  @Override
  public Object getAbsentValue(DeserializationContext ctxt) {
    return null;
  }
}
