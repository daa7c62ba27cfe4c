// How a device connects: its access token and a mosquitto_pub line to paste in a shell.

import { api } from './api.js';
import { h } from './dom.js';

let info = null; // GET /console/info: { mqttPort, mqttTlsPort }, the same for the whole session

/** An element showing the device's credential; for an access token, a ready-to-paste line. */
export async function connectionHelp(deviceId) {
  info ??= await fetch('/console/info').then((response) => response.json());
  const credentials = await api('GET', `/api/device/${deviceId}/credentials`);
  if (credentials.credentialsType !== 'ACCESS_TOKEN') {
    return h('p', {}, `This device logs in with ${credentials.credentialsType} credentials.`);
  }
  const accessToken = credentials.credentialsId;
  const command = `mosquitto_pub -h ${location.hostname} -p ${info.mqttPort} -u ${shellWord(accessToken)}`
    + ` -t v1/devices/me/telemetry -q 1 -m '{"temperature":21.5}'`;
  return h('div', { class: 'connect' },
    h('p', {}, 'Access token: ', h('code', { class: 'access-token' }, accessToken)),
    h('p', {}, 'Publish a value:'),
    h('pre', { class: 'command' }, command),
    info.mqttTlsPort ? h('p', { class: 'hint' }, `MQTT over TLS: port ${info.mqttTlsPort}.`) : null);
}

/** The text as one shell word: as it is when it is plain, else in single quotes. */
function shellWord(text) {
  return /^[A-Za-z0-9._@%+=:,\/-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
