import type { RequestHandler } from 'express';
import { newId } from '@postline/platform';
import { loggableJson } from '../domain/scrub.ts';
import type { RequestLogWriter } from '../jobs/request-log-writer.ts';
import { loggedResponseBody, maybeAuthOf, setLoggedResponseBody, setRequestLogId } from './context.ts';
import { rawEmailSummaryOf } from './raw-email.ts';

/** Captures every authenticated API request (scrubbed bodies, a raw email's summary) for GET /logs once the response is sent. */
export function requestLogger(writer: RequestLogWriter): RequestHandler {
  return (req, res, next) => {
    // Made now, so that the owner a request is forwarded to can keep it (an email links to its request).
    const id = newId();
    setRequestLogId(res, id);
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      setLoggedResponseBody(res, body);
      return json(body);
    };
    res.on('finish', () => {
      const auth = maybeAuthOf(res);
      if (!auth) return;
      writer.record({
        id,
        team_id: auth.teamId,
        api_key_id: auth.keyId,
        user_id: auth.user?.id ?? null,
        endpoint: req.path,
        method: req.method,
        response_status: res.statusCode,
        user_agent: req.header('user-agent') ?? null,
        // A raw email is summarised (type, size, envelope): the message itself is never logged.
        request_body: loggableJson(rawEmailSummaryOf(res) ?? req.body),
        response_body: loggableJson(loggedResponseBody(res)),
      });
    });
    next();
  };
}
