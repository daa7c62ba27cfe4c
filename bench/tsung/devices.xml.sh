#!/usr/bin/env bash
# Writes the Tsung configuration of bench/run.sh's tsung phase to stdout:
#
#   bench/tsung/devices.xml.sh <tokens-file> <mqtt-port> <devices> <arrivals-per-s> <messages> <keys>
#
# One Tsung user per device: it takes the next access token of <tokens-file> (one per line),
# connects to 127.0.0.1:<mqtt-port> with it as MQTT user name (ThingsBoard's device API), then
# publishes <messages> QoS 1 telemetry messages to v1/devices/me/telemetry, each after the PUBACK
# of the one before and a 1-s think time: {"ts":<base + n>,"values":{<keys> integer values}}, about
# 100 bytes, where base is the user's start in epoch milliseconds and n = 0, 1, ... (so that the
# capture's ledger can name every message: bench/tsung/wire.py). Users arrive at
# <arrivals-per-s> (Tsung's exponential inter-arrivals) until all <devices> are there. Tsung stops
# by itself after the last user, or at the latest after 2 x <messages> + 120 s.
set -euo pipefail
tokens=$1 port=$2 devices=$3 ramp=$4 messages=$5 keys=$6
names=(temperature humidity pressure battery voltage)
ranges=("15 30" "30 70" "990 1030" "1 100" "3 4")
((keys >= 1 && keys <= ${#names[@]})) || { echo "devices.xml.sh: keys must be 1..${#names[@]}" >&2; exit 2; }
# The arrival phase lasts twice what the rate needs, plus 5 s: Tsung's launcher gives up on a phase
# whose time ran out (in a 1-s phase it launched 3 users of 100, "Phase duration exceeded"), and
# maxnumber ends the arrivals once every device is there.
arrival_s=$((2 * ((devices + ramp - 1) / ramp) + 5))

values=""
dynvars=""
for ((k = 0; k < keys; k++)); do
  read -r low high <<< "${ranges[$k]}"
  dynvars+="        <setdynvars sourcetype=\"random_number\" start=\"$low\" end=\"$high\"><var name=\"${names[$k]}\"/></setdynvars>
"
  values+="${values:+,}\"${names[$k]}\":%%_${names[$k]}%%"
done

cat << EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="warning" version="1.0">
  <clients>
    <client host="localhost" use_controller_vm="true" maxusers="$((devices + 100))"/>
  </clients>
  <servers>
    <server host="127.0.0.1" port="$port" type="tcp"/>
  </servers>
  <load duration="$((2 * messages + 120))" unit="second">
    <arrivalphase phase="1" duration="$arrival_s" unit="second">
      <users maxnumber="$devices" arrivalrate="$ramp" unit="second"/>
    </arrivalphase>
  </load>
  <options>
    <option name="file_server" id="tokens" value="$tokens"/>
  </options>
  <sessions>
    <session name="device" probability="100" type="ts_mqtt">
      <setdynvars sourcetype="file" fileid="tokens" delimiter=";" order="iter">
        <var name="token"/>
      </setdynvars>
      <request subst="true">
        <mqtt type="connect" clean_start="true" keepalive="60" username="%%_token%%"></mqtt>
      </request>
      <setdynvars sourcetype="eval" code="fun({_Session, _DynVars}) -&gt; os:system_time(millisecond) end.">
        <var name="base"/>
      </setdynvars>
      <for from="0" to="$((messages - 1))" incr="1" var="n">
        <setdynvars sourcetype="eval" code="fun({_Session, DynVars}) -&gt;
            Int = fun(V) when is_integer(V) -&gt; V; (V) when is_binary(V) -&gt; binary_to_integer(V); (V) -&gt; list_to_integer(V) end,
            {ok, Base} = ts_dynvars:lookup(base, DynVars),
            {ok, N} = ts_dynvars:lookup(n, DynVars),
            integer_to_list(Int(Base) + Int(N)) end.">
          <var name="ts"/>
        </setdynvars>
$dynvars        <request subst="true">
          <mqtt type="publish" topic="v1/devices/me/telemetry" qos="1">{"ts":%%_ts%%,"values":{$values}}</mqtt>
        </request>
        <thinktime value="1" random="false"/>
      </for>
      <request>
        <mqtt type="disconnect"></mqtt>
      </request>
    </session>
  </sessions>
</tsung>
EOF
