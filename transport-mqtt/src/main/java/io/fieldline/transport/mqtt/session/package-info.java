@NullMarked
package io.fieldline.transport.mqtt.session;

import org.jspecify.annotations.NullMarked;
