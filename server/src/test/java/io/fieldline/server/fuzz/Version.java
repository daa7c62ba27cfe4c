package io.fieldline.server.fuzz;

/** The MQTT protocol versions a fuzz lane speaks, with their CONNECT protocol name and level. */
enum Version {
  MQTT_3_1_1("MQTT", 4, "3.1.1"),
  MQTT_5("MQTT", 5, "5"),
  MQTT_3_1("MQIsdp", 3, "3.1");

  private final String protocolName;
  private final int level;
  private final String label;

  Version(String protocolName, int level, String label) {
    this.protocolName = protocolName;
    this.level = level;
    this.label = label;
  }

  String protocolName() {
    return protocolName;
  }

  int level() {
    return level;
  }

  /** How reports name the version. */
  String label() {
    return label;
  }
}
