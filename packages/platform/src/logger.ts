import { type Logger, pino } from "pino";

export type { Logger };

/** JSON logs to stdout; secrets never reach them. */
export function createLogger(options: { name: string; level?: string }): Logger {
  return pino({
    name: options.name,
    level: options.level ?? "info",
    redact: {
      paths: [
        "*.password",
        "*.secret",
        "*.token",
        "*.authorization",
        "*.JWT_SECRET",
        "*.DATABASE_URL",
        "*.SMTP_URL",
        "*.DKIM_ENCRYPTION_KEY",
        "*.KAFKA_SASL_PASSWORD",
        "*.dkimEncryptionKey",
      ],
      censor: "[redacted]",
    },
  });
}
