package io.fieldline.common.profile;

import io.fieldline.common.query.SortOrder;
import java.util.Objects;
import java.util.Optional;

/**
 * A page of the device profile list, as ThingsBoard's {@code GET /api/deviceProfiles} asks for it.
 *
 * @param pageSize profiles per page, at least 1
 * @param page zero-based page number
 * @param textSearch keep only profiles whose name contains this text, ignoring case (empty: all)
 * @param sortProperty the order
 * @param sortOrder ascending or descending
 */
public record DeviceProfilePageQuery(
    int pageSize,
    int page,
    Optional<String> textSearch,
    SortProperty sortProperty,
    SortOrder sortOrder) {

  /** The orders a profile list can be sorted in; ties are broken by name, then id. */
  public enum SortProperty {
    NAME,
    CREATED_TIME,
    TRANSPORT_TYPE,
    PROVISION_TYPE
  }

  public DeviceProfilePageQuery {
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
