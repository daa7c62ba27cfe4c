package io.fieldline.common.kv;

/** Who owns an attribute, as in ThingsBoard. Devices publish {@link #CLIENT_SCOPE}. */
public enum AttributeScope {
  CLIENT_SCOPE,
  SHARED_SCOPE,
  SERVER_SCOPE
}
