/**
 * Device credentials: their types and values, the policy a credential must meet, MQTT basic logins,
 * certificate fingerprints, revocation.
 */
@NullMarked
package io.fieldline.common.credentials;

import org.jspecify.annotations.NullMarked;
