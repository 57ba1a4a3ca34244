import {
  AppError,
  MAX_BODY_CODE_POINTS,
  codePointLength,
  firstMissingVariable,
  isUuid,
  renderTemplate,
  segmentInfo,
  templateVariables,
  type Encoding,
} from '@smsgw/core';
import { assertSendableText, contactNamesByPhone, findTemplateById, type MessageTexts, type SqlPool, type TemplateRow } from '@smsgw/db';

/**
 * The checks of a send-template request that do not depend on the recipients: the template
 * exists, is the caller's, and every custom variable it uses is given (spec section 7's three
 * message-only errors).
 */
export async function loadTemplateForSend(sql: SqlPool, o: { userId: string; templateId: string; variables: Record<string, string> }): Promise<TemplateRow> {
  const template = isUuid(o.templateId) ? await findTemplateById(sql, o.templateId) : null;
  if (!template) throw new AppError('template_not_found');
  if (template.userId !== o.userId) throw new AppError('template_not_owned');
  const missing = firstMissingVariable(template.body, o.variables);
  if (missing !== undefined) throw new AppError('missing_variable', `Missing variable: ${missing}.`);
  return template;
}

/**
 * One text per recipient: `{{phone}}` is the number, `{{name}}` the name of the caller's contact
 * with that number (one query for all recipients), else `variables.name`, else empty.
 */
export async function renderForRecipients(
  sql: SqlPool,
  o: { userId: string; template: TemplateRow; variables: Record<string, string>; recipients: string[] },
): Promise<MessageTexts> {
  const { template, variables, recipients } = o;
  const usesName = templateVariables(template.body).reserved.includes('name');
  const names = usesName ? await contactNamesByPhone(sql, { userId: o.userId, phones: recipients }) : new Map<string, string>();
  const fallbackName = Object.hasOwn(variables, 'name') ? (variables.name as string) : '';
  const bodies: string[] = [];
  const segments: number[] = [];
  const encodings: Encoding[] = [];
  for (const phone of recipients) {
    // A contact without a name (one made by adding a phone to a group) falls back like a number that is no contact.
    const body = renderTemplate(template.body, { name: names.get(phone) || fallbackName, phone }, variables);
    const length = codePointLength(body);
    if (length === 0) throw new AppError('invalid_request', `The rendered message for ${phone} is empty.`);
    if (length > MAX_BODY_CODE_POINTS) {
      throw new AppError('invalid_request', `The rendered message for ${phone} is ${length} characters; at most ${MAX_BODY_CODE_POINTS}.`);
    }
    assertSendableText(body, 'variables');
    const info = segmentInfo(body);
    bodies.push(body);
    segments.push(info.segments);
    encodings.push(info.encoding);
  }
  return { kind: 'each', bodies, segments, encodings };
}
