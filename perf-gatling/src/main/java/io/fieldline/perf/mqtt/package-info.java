/**
 * An MQTT 3.1.1 client protocol for Gatling 3.15, in plain Java on Netty's MQTT codec.
 *
 * <p>Entry points are in {@link io.fieldline.perf.mqtt.MqttDsl}: {@code mqtt()} for the protocol
 * and {@code
 * mqtt("name").connect()/publish(..)/subscribe(..)/awaitMessage(..)/respondToRpc()/disconnect()}
 * for the actions. Gatling has no public protocol SPI: this package uses the Java DSL's internal
 * hooks ({@code ActionBuilder.asScala()}, {@code ProtocolBuilder.protocol()}) and Gatling's {@code
 * Action}, {@code StatsEngine} and {@code Session}, so it is pinned to the Gatling version of the
 * pom.
 *
 * <p>Threading: each virtual user's socket is registered on that user's own Gatling event loop
 * ({@code session.eventLoop()}), so socket callbacks and the user's actions run on one thread; a
 * connection's state needs no lock. Only {@link io.fieldline.perf.mqtt.MqttRunStats} is shared
 * between event loops (atomic counters).
 */
@NullMarked
package io.fieldline.perf.mqtt;

import org.jspecify.annotations.NullMarked;
