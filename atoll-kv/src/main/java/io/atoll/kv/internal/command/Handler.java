package io.atoll.kv.internal.command;

/** Runs one command; writes its reply to {@code call.reply} or throws {@link CommandError}. */
@FunctionalInterface
interface Handler {
  void run(Call call);
}
