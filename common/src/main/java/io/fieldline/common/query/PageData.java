package io.fieldline.common.query;

import java.util.List;
import java.util.function.Function;

/**
 * One page of a listing, in ThingsBoard's shape.
 *
 * @param data the page's items
 * @param totalPages pages of this size in the whole listing
 * @param totalElements items in the whole listing
 * @param hasNext whether a later page has items
 */
public record PageData<T>(List<T> data, int totalPages, long totalElements, boolean hasNext) {

  public PageData {
    data = List.copyOf(data);
  }

  /** Page {@code page} of {@code pageSize} out of {@code totalElements}, holding {@code data}. */
  public static <T> PageData<T> of(List<T> data, long totalElements, int pageSize, int page) {
    int totalPages = (int) ((totalElements + pageSize - 1) / pageSize);
    return new PageData<>(
        data, totalPages, totalElements, (long) (page + 1) * pageSize < totalElements);
  }

  public <R> PageData<R> map(Function<? super T, ? extends R> mapper) {
    return new PageData<>(
        data.stream().<R>map(mapper).toList(), totalPages, totalElements, hasNext);
  }
}
