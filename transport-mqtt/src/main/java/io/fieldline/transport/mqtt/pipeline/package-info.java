@NullMarked
package io.fieldline.transport.mqtt.pipeline;

import org.jspecify.annotations.NullMarked;
