/**
 * The {@code WEBHOOK} sink: each batch is one HTTP POST of a JSON array of records, signed with
 * HMAC-SHA256. {@link io.fieldline.export.sink.webhook.WebhookSinkFactory} checks configurations;
 * {@link io.fieldline.export.sink.webhook.WebhookSink} delivers, on the JDK's HTTP client.
 */
@NullMarked
package io.fieldline.export.sink.webhook;

import org.jspecify.annotations.NullMarked;
