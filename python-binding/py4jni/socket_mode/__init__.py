"""Socket mode's Python: py4j's wire protocol to a py4j GatewayServer, or to a py4j
ClientServer's JavaServer in py4j's pinned-thread mode.

- ``transport``: the socket transports and the C clients they open (TLS included);
- ``callbacks``: Java calling Python over sockets: py4j's callback server and proxies,
  and the pinned-thread mode's PythonServer and connections.

The C side of the same transport is python-binding/src/socket/ and bridge/socket/.
"""
