// A real SMTP server on a loopback port that accepts and counts every message: where the
// measures that send mail (renewPassword, users import --invite) deliver it.
import { SMTPServer } from "smtp-server";

export async function smtpSink() {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, done) {
      stream.on("data", () => {});
      stream.on("end", () => {
        received++;
        done();
      });
    },
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
