/**
 * Devices and the ports that keep them: the registry, credentials store, updates, conflicts and
 * gateway links.
 */
@NullMarked
package io.fieldline.common.device;

import org.jspecify.annotations.NullMarked;
