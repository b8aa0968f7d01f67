#include "MinimalServer.h"

#if defined(__linux__)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

// The size of flags serve's answer to GET /healthz.
static const char response[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n";

int minimal_server_run(void) {
    // A SIGTERM ends it, even when the process that started it ignored the signal (an
    // ignored signal stays ignored across exec).
    // The same for a blocked one: a signal mask is inherited too.
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGINT);
    sigprocmask(SIG_UNBLOCK, &ending, NULL);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int yes = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in address = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    socklen_t length = sizeof address;
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, length) != 0 ||
        getsockname(listener, (struct sockaddr *)&address, &length) != 0 || listen(listener, 4096) != 0) {
        return 1;
    }
    printf("listening on %d\n", ntohs(address.sin_port));
    fflush(stdout);
    int poller = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    // Per connection: how much of "\r\n\r\n" the bytes read so far end with.
    static unsigned char matched[65536];
    static char buffer[65536];
    static char answers[65536];
    struct epoll_event ready[256];
    for (;;) {
        int count = epoll_wait(poller, ready, 256, -1);
        for (int k = 0; k < count; k++) {
            int fd = ready[k].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (client >= (int)sizeof matched) {
                        close(client);
                        continue;
                    }
                    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
                    matched[client] = 0;
                    struct epoll_event added = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(poller, EPOLL_CTL_ADD, client, &added);
                }
                continue;
            }
            ssize_t n = recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) {
                if (n == 0 || errno != EAGAIN) close(fd);
                continue;
            }
            // One answer for each request whose blank line came.
            int state = matched[fd];
            size_t out = 0;
            for (ssize_t i = 0; i < n; i++) {
                char expected = state % 2 == 0 ? '\r' : '\n';
                state = buffer[i] == expected ? state + 1 : (buffer[i] == '\r' ? 1 : 0);
                if (state == 4) {
                    state = 0;
                    if (out + sizeof response - 1 <= sizeof answers) {
                        memcpy(answers + out, response, sizeof response - 1);
                        out += sizeof response - 1;
                    }
                }
            }
            matched[fd] = (unsigned char)state;
            if (out > 0) send(fd, answers, out, MSG_NOSIGNAL);
        }
    }
}
#else
int minimal_server_run(void) { return 1; }
#endif
