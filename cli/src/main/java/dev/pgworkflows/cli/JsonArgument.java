package dev.pgworkflows.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** An argument that must be JSON: {@code '{"orderId":7}'}, {@code 42}, {@code '"text"'}. */
final class JsonArgument implements ITypeConverter<JsonNode> {
  @Override
  public JsonNode convert(String value) {
    try {
      JsonNode node = Json.MAPPER.readTree(value);
      if (node == null || node.isMissingNode()) {
        throw new TypeConversionException("empty, where JSON was expected");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new TypeConversionException(
          "not JSON: "
              + value
              + " (a string must be quoted: '\"text\"'; "
              + e.getOriginalMessage()
              + ")");
    }
  }
}
