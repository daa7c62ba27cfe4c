/**
 * Key/value entries and what a device sends: telemetry and attribute values, their types and
 * timestamps, one message and its acknowledgement.
 */
@NullMarked
package io.fieldline.common.kv;

import org.jspecify.annotations.NullMarked;
