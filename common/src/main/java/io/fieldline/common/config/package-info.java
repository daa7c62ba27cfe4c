/**
 * Reading configuration: one validating reader that every module's config record uses at startup,
 * so every module reports all of its configuration errors the same way, with full key paths.
 */
@NullMarked
package io.fieldline.common.config;

import org.jspecify.annotations.NullMarked;
