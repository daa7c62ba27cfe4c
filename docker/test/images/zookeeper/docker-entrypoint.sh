#!/usr/bin/env bash
# Entry point of the zookeeper:3.9 stand-in (docker/test/images/zookeeper): `zkServer.sh
# start-foreground` (the official CMD) writes /conf/zoo.cfg and /data/myid when they do not exist
# yet, from the official image's variables, and runs the server as PID 1; any other command is run
# as given.
set -euo pipefail

if [[ ${1:-} != zkServer.sh ]]; then
  exec "$@"
fi

conf=$ZOO_CONF_DIR/zoo.cfg
if [[ ! -f $conf ]]; then
  {
    echo "dataDir=$ZOO_DATA_DIR"
    echo "dataLogDir=$ZOO_DATA_LOG_DIR"
    echo "tickTime=$ZOO_TICK_TIME"
    echo "initLimit=$ZOO_INIT_LIMIT"
    echo "syncLimit=$ZOO_SYNC_LIMIT"
    echo "autopurge.snapRetainCount=$ZOO_AUTOPURGE_SNAPRETAINCOUNT"
    echo "autopurge.purgeInterval=$ZOO_AUTOPURGE_PURGEINTERVAL"
    echo "maxClientCnxns=$ZOO_MAX_CLIENT_CNXNS"
    echo "standaloneEnabled=$ZOO_STANDALONE_ENABLED"
    echo "admin.enableServer=$ZOO_ADMINSERVER_ENABLED"
    if [[ -z ${ZOO_SERVERS:-} ]]; then
      echo "server.1=localhost:2888:3888;2181"
    else
      for server in $ZOO_SERVERS; do echo "$server"; done
    fi
    if [[ -n ${ZOO_4LW_COMMANDS_WHITELIST:-} ]]; then
      echo "4lw.commands.whitelist=$ZOO_4LW_COMMANDS_WHITELIST"
    fi
    for entry in ${ZOO_CFG_EXTRA:-}; do echo "$entry"; done
  } > "$conf"
fi
if [[ ! -f $ZOO_DATA_DIR/myid ]]; then
  echo "${ZOO_MY_ID:-1}" > "$ZOO_DATA_DIR/myid"
fi

heap=${ZK_SERVER_HEAP:-1000}
set -f
# shellcheck disable=SC2206
flags=(${JVMFLAGS:-})
set +f
exec java "-Xmx${heap}m" "${flags[@]}" -Dzookeeper.log.dir="$ZOO_LOG_DIR" \
  -Dlog4j.configuration=file:/opt/zookeeper/log4j.properties \
  -cp "$ZOO_CONF_DIR:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar" \
  org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf"
