/** The web console: a single page and its files, served from the classpath (Pekko HTTP). */
@NullMarked
package io.fieldline.server.console;

import org.jspecify.annotations.NullMarked;
