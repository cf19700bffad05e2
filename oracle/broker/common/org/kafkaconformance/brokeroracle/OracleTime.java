package org.kafkaconformance.brokeroracle;

import java.util.function.Supplier;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

/**
 * The broker's clock: every reading ({@code milliseconds}, {@code hiResClockMs},
 * {@code nanoseconds}) is the {@code now} of the request being answered, set before the request
 * runs. Nothing in the append path sleeps or waits; {@code sleep} does not move the clock and
 * {@code waitObject} fails at once instead of waiting for a time that never comes.
 */
final class OracleTime implements Time {
    private volatile long nowMs;

    OracleTime(long nowMs) {
        this.nowMs = nowMs;
    }

    void set(long nowMs) {
        this.nowMs = nowMs;
    }

    @Override
    public long milliseconds() {
        return nowMs;
    }

    @Override
    public long hiResClockMs() {
        return nowMs;
    }

    @Override
    public long nanoseconds() {
        long ms = nowMs;
        // saturate rather than wrap (only for clocks beyond the year 2262)
        if (ms > Long.MAX_VALUE / 1_000_000L)
            return Long.MAX_VALUE;
        if (ms < Long.MIN_VALUE / 1_000_000L)
            return Long.MIN_VALUE;
        return ms * 1_000_000L;
    }

    @Override
    public void sleep(long ms) {
        // the clock only moves between requests
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        synchronized (obj) {
            if (!condition.get())
                throw new TimeoutException("broker oracle: the clock does not advance while a request runs");
        }
    }
}
