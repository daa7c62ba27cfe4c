package io.fieldline.common.kv;

/**
 * A device payload is not valid JSON, does not have one of the accepted shapes, or holds something
 * the store cannot take (an unpaired surrogate, a timestamp outside {@link TimestampRange}).
 *
 * <p>The message becomes the dead letter's {@code reason} (a Cassandra {@code text}) and a log
 * line, so any unpaired surrogate copied into it from the payload is replaced by U+FFFD: the reason
 * of a refused payload must itself be storable.
 */
public final class PayloadFormatException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public PayloadFormatException(String message) {
    super(wellFormed(message));
  }

  public PayloadFormatException(String message, Throwable cause) {
    super(wellFormed(message), cause);
  }

  /** Index of the first unpaired surrogate in {@code text}, or -1 when it is well-formed UTF-16. */
  public static int unpairedSurrogate(String text) {
    int length = text.length();
    for (int i = 0; i < length; i++) {
      char c = text.charAt(i);
      if (c < Character.MIN_SURROGATE) {
        continue;
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < length
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  private static String wellFormed(String message) {
    if (unpairedSurrogate(message) < 0) {
      return message;
    }
    StringBuilder out = new StringBuilder(message.length());
    for (int i = 0; i < message.length(); i++) {
      char c = message.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < message.length()
          && Character.isLowSurrogate(message.charAt(i + 1))) {
        out.append(c).append(message.charAt(++i));
      } else {
        out.append(Character.isSurrogate(c) ? '\uFFFD' : c);
      }
    }
    return out.toString();
  }
}
