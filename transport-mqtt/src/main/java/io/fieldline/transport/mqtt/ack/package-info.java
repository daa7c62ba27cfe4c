@NullMarked
package io.fieldline.transport.mqtt.ack;

import org.jspecify.annotations.NullMarked;
