@NullMarked
package io.fieldline.transport.mqtt.publish;

import org.jspecify.annotations.NullMarked;
