package io.fieldline.common.query;

import java.util.Objects;
import java.util.Optional;

/**
 * A page of the device list, as ThingsBoard's {@code GET /api/tenant/devices} asks for it.
 *
 * @param pageSize devices per page, at least 1
 * @param page zero-based page number
 * @param textSearch keep only devices whose name contains this text, ignoring case (empty: all)
 * @param sortProperty the order
 * @param sortOrder ascending or descending
 */
public record DevicePageQuery(
    int pageSize,
    int page,
    Optional<String> textSearch,
    SortProperty sortProperty,
    SortOrder sortOrder) {

  /** The orders a device list can be sorted in; ties are broken by name, then id. */
  public enum SortProperty {
    NAME,
    CREATED_TIME,
    TYPE,
    LABEL
  }

  public DevicePageQuery {
    if (pageSize < 1) {
      throw new IllegalArgumentException("pageSize must be at least 1");
    }
    if (page < 0) {
      throw new IllegalArgumentException("page must not be negative");
    }
    Objects.requireNonNull(textSearch, "textSearch");
    Objects.requireNonNull(sortProperty, "sortProperty");
    Objects.requireNonNull(sortOrder, "sortOrder");
  }
}
