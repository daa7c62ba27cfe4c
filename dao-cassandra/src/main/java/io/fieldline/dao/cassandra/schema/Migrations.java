package io.fieldline.dao.cassandra.schema;

import java.util.List;

/**
 * Every schema version of Fieldline, oldest first. Add new versions at the end; never edit a
 * released one (a database records which versions it has applied, not their text). {@code %1$s} is
 * the keyspace, {@code %2$d} the dead-letter TTL in seconds.
 */
final class Migrations {

  private Migrations() {}

  static final List<Migration> ALL =
      List.of(
          new Migration(
              1,
              "time series, latest values, attributes, devices, dead letters",
              List.of(
                  // One partition per device and time bucket holds every key of that bucket, so
                  // one message is one partition update; key first keeps per-key ranges cheap.
                  "CREATE TABLE IF NOT EXISTS %1$s.ts_kv ("
                      + " device_id uuid, part bigint, key text, ts bigint,"
                      + " bool_v boolean, long_v bigint, dbl_v double, str_v text, json_v text,"
                      + " PRIMARY KEY ((device_id, part), key, ts))"
                      + " WITH CLUSTERING ORDER BY (key ASC, ts DESC)",
                  "CREATE TABLE IF NOT EXISTS %1$s.ts_kv_latest ("
                      + " device_id uuid, key text, ts bigint,"
                      + " bool_v boolean, long_v bigint, dbl_v double, str_v text, json_v text,"
                      + " PRIMARY KEY (device_id, key))",
                  "CREATE TABLE IF NOT EXISTS %1$s.ts_kv_partitions ("
                      + " device_id uuid, part bigint, PRIMARY KEY (device_id, part))"
                      + " WITH CLUSTERING ORDER BY (part DESC)",
                  "CREATE TABLE IF NOT EXISTS %1$s.attributes_kv ("
                      + " device_id uuid, scope text, key text, last_update_ts bigint,"
                      + " bool_v boolean, long_v bigint, dbl_v double, str_v text, json_v text,"
                      + " PRIMARY KEY ((device_id, scope), key))",
                  "CREATE TABLE IF NOT EXISTS %1$s.devices ("
                      + " id uuid PRIMARY KEY, name text, type text, access_token text,"
                      + " created_time bigint)",
                  "CREATE TABLE IF NOT EXISTS %1$s.device_by_token ("
                      + " access_token text PRIMARY KEY, device_id uuid)",
                  // A single bucket (0) gives ordered listing and LWT uniqueness of names; it holds
                  // every device name, which is fine up to a few million devices.
                  "CREATE TABLE IF NOT EXISTS %1$s.device_by_name ("
                      + " bucket int, name text, device_id uuid, PRIMARY KEY ((bucket), name))",
                  "CREATE TABLE IF NOT EXISTS %1$s.dead_letters ("
                      + " device_id uuid, id timeuuid, received_at bigint, topic text,"
                      + " reason text, payload blob, PRIMARY KEY (device_id, id))"
                      + " WITH CLUSTERING ORDER BY (id DESC) AND default_time_to_live = %2$d")),
          new Migration(
              2,
              "key index: the time buckets holding each key (latest values read from ts_kv)",
              List.of(
                  // Clustering (key, part DESC): the first row of a key is its newest bucket, where
                  // its latest value is the first row (ts_kv clusters ts DESC).
                  "CREATE TABLE IF NOT EXISTS %1$s.ts_kv_keys ( device_id uuid, key text, part"
                      + " bigint, PRIMARY KEY (device_id, key, part)) WITH CLUSTERING ORDER BY (key"
                      + " ASC, part DESC)")),
          new Migration(
              3,
              "device credentials: MQTT basic and X.509 columns, device_by_credentials",
              List.of(
                  // A device's one credential lives in its row: the type (null in rows written
                  // before this version: ACCESS_TOKEN), the key it is indexed under (MQTT_BASIC
                  // and X.509), and its parts. ADD IF NOT EXISTS (Cassandra 4.1+) keeps the
                  // statement idempotent, as a migration interrupted half-way runs again.
                  "ALTER TABLE %1$s.devices ADD IF NOT EXISTS (credentials_type text,"
                      + " credentials_key text, mqtt_client_id text, mqtt_user_name text,"
                      + " mqtt_password_hash text, certificate_pem text)",
                  // MQTT_BASIC and X.509 credentials by key (device_by_token keeps the tokens):
                  // one row per credential, reserved with IF NOT EXISTS like names and tokens.
                  "CREATE TABLE IF NOT EXISTS %1$s.device_by_credentials ("
                      + " credentials_key text PRIMARY KEY, device_id uuid)")),
          new Migration(
              4,
              "device label and additional info, device change log, persistent RPCs,"
                  + " cleared latest values",
              List.of(
                  "ALTER TABLE %1$s.devices ADD IF NOT EXISTS (label text, additional_info text)",
                  // What each node's device directory reads to catch up with the others: one
                  // row per create, update or delete, in hourly partitions read from the last
                  // checkpoint on (usually one small slice of the current hour). Kept a day: a
                  // node whose checkpoint is older reloads the whole directory instead.
                  "CREATE TABLE IF NOT EXISTS %1$s.device_changes ("
                      + " hour bigint, changed timeuuid, device_id uuid,"
                      + " PRIMARY KEY ((hour), changed)) WITH default_time_to_live = 86400",
                  // Persistent server-side RPCs: one partition per device (listing, pending),
                  // statuses moved by lightweight transactions; rows expire after rpc-ttl.
                  "CREATE TABLE IF NOT EXISTS %1$s.rpc_requests ("
                      + " device_id uuid, id uuid, created_time bigint, method text, params text,"
                      + " oneway boolean, timeout_ms bigint, expiration_time bigint, retries int,"
                      + " additional_info text, status text, response text,"
                      + " PRIMARY KEY (device_id, id))",
                  // A request's device by its id alone (REST reads and deletes by id).
                  "CREATE TABLE IF NOT EXISTS %1$s.rpc_by_id (id uuid PRIMARY KEY, device_id uuid)",
                  // Derived latest values (ts-ttl = 0) of keys whose latest value was deleted:
                  // key -> timestamp at or below which rows are no longer latest values. A static
                  // column, so the index read that finds each key's newest bucket returns it too.
                  "ALTER TABLE %1$s.ts_kv_keys ADD IF NOT EXISTS latest_cleared map<text, bigint>"
                      + " static")),
          new Migration(
              5,
              "device profiles, their names and provision keys, the profile of each device",
              List.of(
                  // One row per profile; the provision secret only as a salted hash. deleting is
                  // set while a delete checks that no device has the profile (assignments
                  // refuse a profile being deleted).
                  "CREATE TABLE IF NOT EXISTS %1$s.device_profiles ("
                      + " id uuid PRIMARY KEY, name text, type text, transport_type text,"
                      + " provision_type text, provision_key text, secret_salt blob,"
                      + " secret_hash blob, description text, created_time bigint,"
                      + " deleting boolean)",
                  // Unique names and provision keys: a claim each, reserved with IF NOT EXISTS
                  // and released IF profile_id = ?, as device names and credentials are.
                  "CREATE TABLE IF NOT EXISTS %1$s.device_profile_by_name ("
                      + " name text PRIMARY KEY, profile_id uuid)",
                  "CREATE TABLE IF NOT EXISTS %1$s.device_profile_by_key ("
                      + " provision_key text PRIMARY KEY, profile_id uuid)",
                  // ThingsBoard's one default profile: a single row, so there is never two.
                  "CREATE TABLE IF NOT EXISTS %1$s.device_profile_default ("
                      + " singleton int PRIMARY KEY, profile_id uuid)",
                  // A device's profile lives in its row; devices_by_profile lists the devices of
                  // a profile (a claim the device row confirms) so a delete can refuse a
                  // profile in use without scanning devices.
                  "ALTER TABLE %1$s.devices ADD IF NOT EXISTS (device_profile_id uuid)",
                  "CREATE TABLE IF NOT EXISTS %1$s.devices_by_profile ("
                      + " profile_id uuid, device_id uuid, PRIMARY KEY (profile_id, device_id))")),
          new Migration(
              6,
              "OTA packages, their data in chunks, device firmware assignments",
              List.of(
                  // One row per package; the data columns are set once, when its upload
                  // completes (data_id names the upload whose chunks are the data). deleting is
                  // set while a delete checks that no device is assigned the package.
                  "CREATE TABLE IF NOT EXISTS %1$s.ota_packages ("
                      + " id uuid PRIMARY KEY, created_time bigint, title text, version text,"
                      + " type text, tag text, device_profile_id uuid, additional_info text,"
                      + " file_name text, content_type text, data_size bigint, chunk_size int,"
                      + " checksum_algorithm text, checksum text, data_id uuid, deleting boolean)",
                  // Unique title and version: a claim, reserved with IF NOT EXISTS and released
                  // IF package_id = ?, as device names are.
                  "CREATE TABLE IF NOT EXISTS %1$s.ota_package_titles ("
                      + " title text, version text, package_id uuid,"
                      + " PRIMARY KEY ((title), version))",
                  // A package's data in chunks of chunk_size bytes, one partition per package
                  // (deleting the package is one partition delete), clustered by upload so that
                  // concurrent or failed uploads never mix their chunks with the data's.
                  "CREATE TABLE IF NOT EXISTS %1$s.ota_package_data ("
                      + " package_id uuid, data_id uuid, chunk_index int, data blob,"
                      + " PRIMARY KEY ((package_id), data_id, chunk_index))",
                  // A device's firmware, and the devices of each package (a claim the device's
                  // row confirms) so that a delete can refuse a package in use without a scan.
                  "CREATE TABLE IF NOT EXISTS %1$s.device_firmware ("
                      + " device_id uuid PRIMARY KEY, package_id uuid, assigned_time bigint)",
                  "CREATE TABLE IF NOT EXISTS %1$s.ota_package_devices ( package_id uuid, device_id"
                      + " uuid, PRIMARY KEY ((package_id), device_id))")),
          new Migration(
              7,
              "device profiles' firmware",
              List.of(
                  // A device profile's firmware (what its devices without their own get), and the
                  // profiles of each package, a claim the profile's row confirms, the same way.
                  "CREATE TABLE IF NOT EXISTS %1$s.profile_firmware ("
                      + " profile_id uuid PRIMARY KEY, package_id uuid, assigned_time bigint)",
                  "CREATE TABLE IF NOT EXISTS %1$s.ota_package_profiles ( package_id uuid,"
                      + " profile_id uuid, PRIMARY KEY ((package_id), profile_id))")),
          new Migration(
              8,
              "change feed and export sinks",
              List.of(
                  // One log per server process; a partition per block of 4,096 positions keeps
                  // partitions small and makes every coalesced batch's feed rows one mutation.
                  // Rows expire by the TTL each is written with (export.feed-retention); time
                  // windows let whole SSTables drop once expired.
                  "CREATE TABLE IF NOT EXISTS %1$s.feed ( log uuid, block bigint, pos bigint,"
                      + " seq bigint, device_id uuid, kind tinyint, scope text, ts bigint,"
                      + " body blob, PRIMARY KEY ((log, block), pos))"
                      + " WITH compaction = {'class': 'TimeWindowCompactionStrategy',"
                      + " 'compaction_window_unit': 'HOURS', 'compaction_window_size': 6}"
                      + " AND gc_grace_seconds = 10800",
                  // Every log, in one partition: a handful of rows per process start.
                  "CREATE TABLE IF NOT EXISTS %1$s.feed_logs ( bucket int, log uuid, node text,"
                      + " created_at bigint, owner uuid, lease_until bigint, last_pos bigint,"
                      + " closed boolean, retired boolean, PRIMARY KEY ((bucket), log))",
                  "CREATE TABLE IF NOT EXISTS %1$s.feed_cursors ( sink_id uuid, log uuid,"
                      + " pos bigint, watermark bigint, updated_at bigint, generation int,"
                      + " PRIMARY KEY ((sink_id), log))",
                  "CREATE TABLE IF NOT EXISTS %1$s.sinks ( id uuid PRIMARY KEY, name text,"
                      + " type text, filter text, configuration text, paused boolean,"
                      + " created_time bigint, updated_time bigint, replay_from bigint,"
                      + " generation int)",
                  "CREATE TABLE IF NOT EXISTS %1$s.sink_names ( name text PRIMARY KEY,"
                      + " sink_id uuid)",
                  "CREATE TABLE IF NOT EXISTS %1$s.sink_status ( sink_id uuid, node text,"
                      + " state text, delivered bigint, lag_records bigint, oldest_at bigint,"
                      + " last_error text, last_error_at bigint, updated_at bigint,"
                      + " PRIMARY KEY ((sink_id), node))",
                  "CREATE TABLE IF NOT EXISTS %1$s.sink_dead_letters ( sink_id uuid,"
                      + " id timeuuid, created_time bigint, records int, status int,"
                      + " error text, body text, PRIMARY KEY ((sink_id), id))"
                      + " WITH CLUSTERING ORDER BY (id DESC) AND default_time_to_live = %2$d")));
}
