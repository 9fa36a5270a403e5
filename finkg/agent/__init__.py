"""finkg for agents: a Model Context Protocol server (`server`) whose tools read a store
read-only and point-in-time (`view`, `calls`), in a worker process that a time limit can stop
(`worker`), over stdio or streamable HTTP behind a bearer token (`http`)."""
