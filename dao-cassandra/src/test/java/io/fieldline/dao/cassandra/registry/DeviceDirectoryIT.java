package io.fieldline.dao.cassandra.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.DevicePageQuery.SortProperty;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.dao.cassandra.CassandraTestBase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The device listing against real Cassandra: ThingsBoard's orders, text search and totals from the
 * in-memory directory, and two registries on one keyspace standing for two nodes, each seeing the
 * other's changes in its next listing.
 */
class DeviceDirectoryIT extends CassandraTestBase {

  private final List<CassandraDeviceRegistry> opened = new ArrayList<>();
  private CassandraDeviceRegistry node1;
  private CassandraDeviceRegistry node2;

  @Override
  protected String extraConfig() {
    return "fieldline.cassandra.password-hashing.cost = 4";
  }

  @BeforeEach
  void twoNodes() {
    truncate(
        "devices", "device_by_token", "device_by_name", "device_by_credentials", "device_changes");
    node1 = open();
    node2 = open();
  }

  @AfterEach
  void closeNodes() {
    opened.forEach(CassandraDeviceRegistry::close);
    opened.clear();
  }

  private CassandraDeviceRegistry open() {
    CassandraDeviceRegistry registry = new CassandraDeviceRegistry(session, config);
    opened.add(registry);
    return registry;
  }

  private Device create(CassandraDeviceRegistry on, String name, String type, String label) {
    Device device = await(on.create(name, type, Optional.empty()));
    if (label == null) {
      return device;
    }
    return await(on.update(new DeviceUpdate(device.id(), name, type, label, null))).orElseThrow();
  }

  private static DevicePageQuery query(
      int pageSize, int page, String search, SortProperty property, SortOrder order) {
    return new DevicePageQuery(pageSize, page, Optional.ofNullable(search), property, order);
  }

  private List<String> allPages(
      CassandraDeviceRegistry on, int pageSize, String search, SortProperty by, SortOrder order) {
    List<String> names = new ArrayList<>();
    for (int page = 0; ; page++) {
      PageData<Device> data = await(on.page(query(pageSize, page, search, by, order)));
      data.data().forEach(device -> names.add(device.name()));
      if (!data.hasNext()) {
        return names;
      }
    }
  }

  private List<String> names(PageData<Device> page) {
    return page.data().stream().map(Device::name).toList();
  }

  // Seven devices: types, labels (two missing) and creation times to sort by.
  private List<Device> fleet() {
    List<Device> fleet = new ArrayList<>();
    fleet.add(create(node1, "pump-3", "pump", "East"));
    fleet.add(create(node1, "Big-Pump", "pump", null));
    fleet.add(create(node1, "valve-1", "valve", "West"));
    fleet.add(create(node1, "meter-2", "meter", "East"));
    fleet.add(create(node1, "pump-1", "pump", "Attic"));
    fleet.add(create(node1, "meter-1", "meter", null));
    fleet.add(create(node1, "valve-2", "valve", "Basement"));
    return fleet;
  }

  @Test
  void should_page_in_every_order_with_ties_broken_by_name() {
    List<Device> fleet = fleet();

    assertThat(allPages(node1, 3, null, SortProperty.NAME, SortOrder.ASC))
        .containsExactly(
            "Big-Pump", "meter-1", "meter-2", "pump-1", "pump-3", "valve-1", "valve-2");
    assertThat(allPages(node1, 3, null, SortProperty.NAME, SortOrder.DESC))
        .containsExactly(
            "valve-2", "valve-1", "pump-3", "pump-1", "meter-2", "meter-1", "Big-Pump");
    assertThat(allPages(node1, 3, null, SortProperty.TYPE, SortOrder.ASC))
        .containsExactly(
            "meter-1", "meter-2", "Big-Pump", "pump-1", "pump-3", "valve-1", "valve-2");
    assertThat(allPages(node1, 3, null, SortProperty.TYPE, SortOrder.DESC))
        .containsExactly(
            "valve-1", "valve-2", "Big-Pump", "pump-1", "pump-3", "meter-1", "meter-2");
    // No label: last ascending, first descending (PostgreSQL's order, ThingsBoard's database).
    assertThat(allPages(node1, 3, null, SortProperty.LABEL, SortOrder.ASC))
        .containsExactly(
            "pump-1", "valve-2", "meter-2", "pump-3", "valve-1", "Big-Pump", "meter-1");
    assertThat(allPages(node1, 3, null, SortProperty.LABEL, SortOrder.DESC))
        .containsExactly(
            "Big-Pump", "meter-1", "valve-1", "meter-2", "pump-3", "valve-2", "pump-1");
    Comparator<Device> byCreation =
        Comparator.comparingLong(Device::createdTime).thenComparing(Device::name);
    assertThat(allPages(node1, 3, null, SortProperty.CREATED_TIME, SortOrder.ASC))
        .containsExactlyElementsOf(fleet.stream().sorted(byCreation).map(Device::name).toList());
    assertThat(allPages(node1, 3, null, SortProperty.CREATED_TIME, SortOrder.DESC))
        .containsExactlyElementsOf(
            fleet.stream()
                .sorted(
                    Comparator.comparingLong(Device::createdTime)
                        .reversed()
                        .thenComparing(Device::name))
                .map(Device::name)
                .toList());
  }

  @Test
  void should_report_totals_and_serve_any_page_directly() {
    List<Device> fleet = fleet();

    PageData<Device> first = await(node1.page(query(3, 0, null, SortProperty.NAME, SortOrder.ASC)));
    PageData<Device> last = await(node1.page(query(3, 2, null, SortProperty.NAME, SortOrder.ASC)));
    PageData<Device> beyond =
        await(node1.page(query(3, 9, null, SortProperty.NAME, SortOrder.ASC)));

    assertThat(first.totalElements()).isEqualTo(7);
    assertThat(first.totalPages()).isEqualTo(3);
    assertThat(first.hasNext()).isTrue();
    assertThat(last.data()).extracting(Device::name).containsExactly("valve-2");
    assertThat(last.hasNext()).isFalse();
    assertThat(beyond.data()).isEmpty();
    assertThat(beyond.totalElements()).isEqualTo(7);
    // Whole devices, read from their rows: token, label, additional info.
    Device valve2 = fleet.get(6);
    assertThat(last.data()).containsExactly(valve2);
  }

  @Test
  void should_search_names_by_substring_ignoring_case() {
    fleet();

    PageData<Device> pumps =
        await(node1.page(query(2, 0, "PUMP", SortProperty.NAME, SortOrder.ASC)));

    assertThat(names(pumps)).containsExactly("Big-Pump", "pump-1");
    assertThat(pumps.totalElements()).isEqualTo(3);
    assertThat(pumps.hasNext()).isTrue();
    assertThat(allPages(node1, 2, "pump", SortProperty.NAME, SortOrder.DESC))
        .containsExactly("pump-3", "pump-1", "Big-Pump");
    assertThat(await(node1.page(query(2, 0, "nothing", SortProperty.NAME, SortOrder.ASC))))
        .isEqualTo(new PageData<Device>(List.of(), 0, 0, false));
    assertThat(allPages(node1, 10, "", SortProperty.NAME, SortOrder.ASC)).hasSize(7);
  }

  @Test
  void should_list_another_nodes_create_update_and_delete_as_soon_as_they_complete() {
    List<DeviceId> changedElsewhere = new CopyOnWriteArrayList<>();
    node1.onDeviceChanged(changedElsewhere::add);
    create(node1, "a-1", "pump", null);
    assertThat(names(await(node1.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)))))
        .containsExactly("a-1");

    Device created = create(node2, "b-1", "pump", null);
    assertThat(names(await(node1.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)))))
        .containsExactly("a-1", "b-1");

    await(node2.update(new DeviceUpdate(created.id(), "0-first", "valve", "L", null)));
    PageData<Device> renamed =
        await(node1.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)));
    assertThat(names(renamed)).containsExactly("0-first", "a-1");
    assertThat(renamed.data().get(0).label()).isEqualTo("L");
    assertThat(changedElsewhere).contains(created.id());

    await(node2.delete(created.id()));
    assertThat(names(await(node1.page(query(10, 0, null, SortProperty.TYPE, SortOrder.ASC)))))
        .containsExactly("a-1");
  }

  @Test
  void should_read_each_change_once_when_listing_again() {
    create(node2, "a-1", "pump", null);
    await(node1.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)));
    create(node2, "a-2", "pump", null);
    await(node1.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)));
    List<DeviceId> reread = new CopyOnWriteArrayList<>();
    node1.onDeviceChanged(reread::add);

    // Both changes are within the overlap the next catch-up reads again: neither is re-read.
    assertThat(names(await(node1.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)))))
        .containsExactly("a-1", "a-2");
    assertThat(reread).isEmpty();
    assertThat(node1.directoryFullScans()).isEqualTo(1);
  }

  @Test
  void should_fill_the_directory_with_one_scan_at_start_and_only_once() {
    fleet();
    List<Device> seen = new CopyOnWriteArrayList<>();

    assertThat(node2.loadDirectory(seen::add)).isEqualTo(7);

    assertThat(seen).hasSize(7);
    assertThat(node2.directorySize()).isEqualTo(7);
    assertThat(await(node2.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC))).data())
        .hasSize(7);
    assertThat(node2.directoryFullScans()).isEqualTo(1);
    assertThatThrownBy(() -> node2.loadDirectory(device -> {}))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void should_scan_again_when_the_last_catch_up_is_older_than_the_change_log() {
    DeviceTable table = new DeviceTable(session, keyspace);
    AtomicLong clock = new AtomicLong(System.currentTimeMillis());
    DeviceDirectory directory =
        new DeviceDirectory(table, new DeviceChangeLog(session, keyspace), clock::get);
    create(node1, "a-1", "pump", null);
    await(directory.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)));
    assertThat(directory.fullScans()).isEqualTo(1);
    // A change whose record the log no longer holds.
    Device hidden = create(node1, "a-2", "pump", null);
    truncate("device_changes");

    clock.addAndGet(DeviceChangeLog.RETENTION.plus(Duration.ofMinutes(1)).toMillis());
    PageData<Device> page =
        await(directory.page(query(10, 0, null, SortProperty.NAME, SortOrder.ASC)));

    assertThat(directory.fullScans()).isEqualTo(2);
    assertThat(page.data()).extracting(Device::id).contains(hidden.id());
  }
}
