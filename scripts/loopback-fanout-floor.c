// The floor under `changes.p99-ms.10000`: the time this machine's kernel takes to deliver one ~100-byte line to each
// of N loopback TCP connections, written by W threads (one write each, as a feed's line is) and read through epoll
// by one more, in C with nothing else running. `make fanout-floor` runs it for 9,000 connections (both ends fit the
// 20,000-file limit) with one and two writers and prints the time until the last line was read.
//
//   cc -O2 -pthread -o fanout-floor scripts/loopback-fanout-floor.c && ./fanout-floor 9000 2
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *line = "{\"seq\":12345,\"id\":\"doc-12345\",\"changes\":[{\"rev\":\"1-0123456789abcdef0123456789abcdef\"}]}\n";
static int count, *server_ends, epoll_fd;
static volatile int lines_read;

struct range { int from, to; };

static double now_ms(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
}

static void *read_lines(void *unused) {
    struct epoll_event events[256];
    char buffer[512];
    while (lines_read < count) {
        int ready = epoll_wait(epoll_fd, events, 256, 1000);
        for (int i = 0; i < ready; i++) {
            if (read(events[i].data.fd, buffer, sizeof buffer) > 0) lines_read++;
        }
    }
    return unused;
}

static void *write_lines(void *argument) {
    struct range *range = argument;
    for (int i = range->from; i < range->to; i++) {
        if (write(server_ends[i], line, strlen(line)) < 0) perror("write");
    }
    return NULL;
}

int main(int argc, char **argv) {
    count = argc > 1 ? atoi(argv[1]) : 9000;
    int writers = argc > 2 ? atoi(argv[2]) : 1;
    if (writers < 1 || writers > 8) writers = 1;
    struct rlimit limit = {20000, 20000};
    setrlimit(RLIMIT_NOFILE, &limit);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (bind(listener, (void *)&address, length) || getsockname(listener, (void *)&address, &length) ||
        listen(listener, 4096)) {
        perror("listen");
        return 1;
    }
    server_ends = calloc(count, sizeof(int));
    epoll_fd = epoll_create1(0);
    for (int i = 0; i < count; i++) {
        int client = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(client, (void *)&address, sizeof address)) {
            perror("connect");
            return 1;
        }
        server_ends[i] = accept(listener, NULL, NULL);
        int on = 1;
        setsockopt(server_ends[i], IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        struct epoll_event event = {.events = EPOLLIN, .data.fd = client};
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client, &event);
    }
    for (int round = 0; round < 5; round++) {
        lines_read = 0;
        pthread_t reader, threads[8];
        struct range ranges[8];
        pthread_create(&reader, NULL, read_lines, NULL);
        double start = now_ms();
        for (int k = 0; k < writers; k++) {
            ranges[k] = (struct range){count * k / writers, count * (k + 1) / writers};
            pthread_create(&threads[k], NULL, write_lines, &ranges[k]);
        }
        for (int k = 0; k < writers; k++) pthread_join(threads[k], NULL);
        pthread_join(reader, NULL);
        printf("%d connections, %d writer(s): last line read after %.1f ms\n", count, writers, now_ms() - start);
    }
    return 0;
}
