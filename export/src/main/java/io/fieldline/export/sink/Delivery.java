package io.fieldline.export.sink;

/** The outcome of delivering one batch. */
public sealed interface Delivery {

  /** Every record was taken by the receiver. */
  record Delivered() implements Delivery {}

  /**
   * Nothing may be counted as delivered; try the same batch again later (the receiver was down,
   * slow, or answered 429/5xx). Part of it may have arrived: redelivery is the at-least-once case.
   */
  record Retry(String error) implements Delivery {}

  /**
   * The receiver refused the batch for good (a 4xx other than 429): it goes to the sink's dead
   * letters and delivery goes on.
   *
   * @param status the receiver's answer (an HTTP status), 0 when it has none
   * @param body what was sent, as the dead letter keeps it
   */
  record Rejected(int status, String error, String body) implements Delivery {}

  Delivery DELIVERED = new Delivered();
}
