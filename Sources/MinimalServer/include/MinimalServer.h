#ifndef MINIMAL_SERVER_H
#define MINIMAL_SERVER_H

/// The limit of one thread of this machine for HTTP/1.1 (Linux): an epoll loop on
/// 127.0.0.1 that answers every request of a keep-alive connection with one small fixed
/// response and does nothing else. Prints "listening on PORT" on stdout, then serves until
/// the process is killed. Returns only when it cannot listen (or is not on Linux): 1.
int minimal_server_run(void);

#endif
