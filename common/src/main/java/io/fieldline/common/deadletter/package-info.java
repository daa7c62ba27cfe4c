/**
 * Dead letters: messages kept because they could not be stored, the port that writes them and the
 * one that reads them back.
 */
@NullMarked
package io.fieldline.common.deadletter;

import org.jspecify.annotations.NullMarked;
