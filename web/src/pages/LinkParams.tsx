import { useEffect, useState } from 'react';
import { api, data } from '../api';
import { Field, FormError, useSubmit } from '../ui';

/** The names as typed: commas or spaces between them, empty pieces dropped. */
const namesOf = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/**
 * The organization's link parameters (GET/PUT /api/link-params): the query parameters that name a
 * partner in a link. The snippet, the server middleware and the first-party path learn them from
 * the service, so the merchant's tags stay as they are; an import adds its source's (`via`).
 */
export function LinkParams() {
  const [saved, setSaved] = useState<string[]>();
  const [text, setText] = useState('');
  const [done, setDone] = useState(false);
  useEffect(() => {
    void api.linkParams.get().then((res) => {
      const list = data(res).link_params;
      setSaved(list);
      setText(list.join(', '));
    });
  }, []);
  const save = useSubmit(
    async () => data(await api.linkParams.update({ body: { link_params: namesOf(text) } })).link_params,
    (list) => {
      setSaved(list);
      setText(list.join(', '));
      setDone(true);
    },
  );
  return (
    <section aria-labelledby="link-params-title">
      <h2 id="link-params-title">Link parameters</h2>
      <p>
        A visit attributes to a partner when its address carries one of these query parameters:{' '}
        {saved ? (
          saved.map((name, i) => (
            <span key={name}>
              {i > 0 && ', '}
              <code style={{ whiteSpace: 'nowrap' }}>
                ?{name}=<em>slug</em>
              </code>
            </span>
          ))
        ) : (
          <span className="muted">loading…</span>
        )}
        . The snippet and the server middleware pick up changes within five minutes, with no change to your pages. An
        import adds the parameter its platform's links use (Rewardful <code>via</code>, FirstPromoter <code>fpr</code>,
        PartnerStack <code>gspk</code>), so links your partners already published keep paying.
      </p>
      <form
        onSubmit={(e) => {
          setDone(false);
          void save.submit(e);
        }}
      >
        <Field
          label="Parameters"
          name="link_params"
          value={text}
          onChange={(value) => {
            setText(value);
            setDone(false);
          }}
          hint="1 to 10 names, separated by commas: lowercase letters, digits, _ and -. Keep ref unless another name replaces it."
          placeholder="ref, via"
        />
        <button type="submit" disabled={save.busy || saved === undefined}>
          Save link parameters
        </button>
        <FormError error={save.error} />
        {done && (
          <p role="status" className="muted">
            Saved.
          </p>
        )}
      </form>
    </section>
  );
}
