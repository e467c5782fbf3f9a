package awsapi

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// queue is an SQS standard queue. Its visibility timeouts run on the server's clock.
type queue struct {
	name       string
	visibility time.Duration
	wait       time.Duration
	created    time.Time
	messages   []*sqsMessage
}

type sqsMessage struct {
	id           string
	body         string
	md5          string
	sent         time.Time
	visibleAt    time.Time
	receives     int
	firstReceive time.Time
}

func newQueue(name string) *queue {
	return &queue{name: name, visibility: 30 * time.Second}
}

// enqueue adds a message visible from at and wakes long polls. Callers hold mu.
func (s *Server) enqueue(q *queue, body string, at time.Time) *sqsMessage {
	sum := md5.Sum([]byte(body))
	m := &sqsMessage{id: newUUID(s.nextID("msg")), body: body, md5: hex.EncodeToString(sum[:]), sent: at, visibleAt: at}
	q.messages = append(q.messages, m)
	close(s.notify)
	s.notify = make(chan struct{})
	return m
}

// QueueMessages returns the bodies of the messages a queue holds (in flight or not), oldest
// first.
func (s *Server) QueueMessages(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncLocked()
	q := s.queues[name]
	if q == nil {
		return nil
	}
	out := make([]string, len(q.messages))
	for i, m := range q.messages {
		out[i] = m.body
	}
	return out
}

func queueURL(r *http.Request, account, name string) string {
	return "http://" + r.Host + "/" + account + "/" + name
}

// queueFor finds the queue a QueueUrl names. Callers hold mu.
func (s *Server) queueFor(url string) (*queue, *apiError) {
	name := url[strings.LastIndexByte(url, '/')+1:]
	if q := s.queues[name]; q != nil && name != "" {
		return q, nil
	}
	return nil, badRequest("QueueDoesNotExist", "The specified queue does not exist.")
}

func receiptHandle(m *sqsMessage) string {
	return base64.RawURLEncoding.EncodeToString([]byte(m.id + "#" + strconv.Itoa(m.receives)))
}

// byHandle finds the message a receipt handle names; a handle of an earlier receive still
// names its message.
func (q *queue) byHandle(handle string) (int, *apiError) {
	b, err := base64.RawURLEncoding.DecodeString(handle)
	id, _, ok := strings.Cut(string(b), "#")
	if err != nil || !ok {
		return -1, badRequest("ReceiptHandleIsInvalid", "The input receipt handle \"%s\" is not a valid receipt handle.", handle)
	}
	for i, m := range q.messages {
		if m.id == id {
			return i, nil
		}
	}
	return -1, nil
}

type sqsReceived struct {
	MessageID     string            `json:"MessageId"`
	ReceiptHandle string            `json:"ReceiptHandle"`
	MD5OfBody     string            `json:"MD5OfBody"`
	Body          string            `json:"Body"`
	Attributes    map[string]string `json:"Attributes,omitempty"`
}

func (s *Server) sqs(op string, body []byte, r *http.Request) (any, *apiError) {
	var in struct {
		QueueName                   string
		QueueUrl                    string
		Attributes                  map[string]string
		MessageBody                 string
		DelaySeconds                *int
		MaxNumberOfMessages         *int
		VisibilityTimeout           *int
		WaitTimeSeconds             *int
		ReceiptHandle               string
		AttributeNames              []string
		MessageSystemAttributeNames []string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	switch op {
	case "CreateQueue":
		if in.QueueName == "" || len(in.QueueName) > 80 || strings.ContainsAny(in.QueueName, "/: ") {
			return nil, badRequest("InvalidParameterValue", "Queue name %q is not 1 to 80 letters, digits, hyphens and underscores", in.QueueName)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		q := s.queues[in.QueueName]
		if q == nil {
			q = newQueue(in.QueueName)
			q.created = s.opts.Clock.Now()
			s.queues[in.QueueName] = q
		}
		if v, ok := in.Attributes["VisibilityTimeout"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 43200 {
				return nil, badRequest("InvalidAttributeValue", "Invalid value for the parameter VisibilityTimeout.")
			}
			q.visibility = time.Duration(n) * time.Second
		}
		if v, ok := in.Attributes["ReceiveMessageWaitTimeSeconds"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 20 {
				return nil, badRequest("InvalidAttributeValue", "Invalid value for the parameter ReceiveMessageWaitTimeSeconds.")
			}
			q.wait = time.Duration(n) * time.Second
		}
		return map[string]string{"QueueUrl": queueURL(r, s.opts.Account, q.name)}, nil
	case "GetQueueUrl":
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.queues[in.QueueName] == nil {
			return nil, badRequest("QueueDoesNotExist", "The specified queue does not exist.")
		}
		return map[string]string{"QueueUrl": queueURL(r, s.opts.Account, in.QueueName)}, nil
	case "GetQueueAttributes":
		s.mu.Lock()
		defer s.mu.Unlock()
		s.syncLocked()
		q, err := s.queueFor(in.QueueUrl)
		if err != nil {
			return nil, err
		}
		now := s.opts.Clock.Now()
		visible, inflight := 0, 0
		for _, m := range q.messages {
			if m.visibleAt.After(now) {
				inflight++
			} else {
				visible++
			}
		}
		return map[string]any{"Attributes": map[string]string{
			"QueueArn":                              "arn:aws:sqs:" + s.region + ":" + s.opts.Account + ":" + q.name,
			"ApproximateNumberOfMessages":           strconv.Itoa(visible),
			"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(inflight),
			"VisibilityTimeout":                     strconv.Itoa(int(q.visibility / time.Second)),
			"CreatedTimestamp":                      strconv.FormatInt(q.created.Unix(), 10),
		}}, nil
	case "SendMessage":
		if in.MessageBody == "" {
			return nil, badRequest("MissingParameter", "The request must contain the parameter MessageBody.")
		}
		if len(in.MessageBody) > 1<<20 {
			return nil, badRequest("InvalidParameterValue", "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		q, err := s.queueFor(in.QueueUrl)
		if err != nil {
			return nil, err
		}
		at := s.opts.Clock.Now()
		if in.DelaySeconds != nil {
			if *in.DelaySeconds < 0 || *in.DelaySeconds > 900 {
				return nil, badRequest("InvalidParameterValue", "Value %d for parameter DelaySeconds is invalid. Reason: must be between 0 and 900.", *in.DelaySeconds)
			}
			at = at.Add(time.Duration(*in.DelaySeconds) * time.Second)
		}
		m := s.enqueue(q, in.MessageBody, at)
		m.sent = s.opts.Clock.Now()
		return map[string]string{"MessageId": m.id, "MD5OfMessageBody": m.md5}, nil
	case "ReceiveMessage":
		return s.receive(r, in.QueueUrl, in.MaxNumberOfMessages, in.VisibilityTimeout, in.WaitTimeSeconds, append(in.AttributeNames, in.MessageSystemAttributeNames...))
	case "DeleteMessage":
		s.mu.Lock()
		defer s.mu.Unlock()
		q, err := s.queueFor(in.QueueUrl)
		if err != nil {
			return nil, err
		}
		i, err := q.byHandle(in.ReceiptHandle)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			q.messages = append(q.messages[:i], q.messages[i+1:]...)
		}
		return map[string]string{}, nil
	case "ChangeMessageVisibility":
		s.mu.Lock()
		defer s.mu.Unlock()
		q, err := s.queueFor(in.QueueUrl)
		if err != nil {
			return nil, err
		}
		if in.VisibilityTimeout == nil || *in.VisibilityTimeout < 0 || *in.VisibilityTimeout > 43200 {
			return nil, badRequest("InvalidParameterValue", "VisibilityTimeout must be between 0 and 43200 seconds")
		}
		i, err := q.byHandle(in.ReceiptHandle)
		if err != nil {
			return nil, err
		}
		now := s.opts.Clock.Now()
		if i < 0 || !q.messages[i].visibleAt.After(now) {
			return nil, badRequest("MessageNotInflight", "The message referred to is not in flight.")
		}
		q.messages[i].visibleAt = now.Add(time.Duration(*in.VisibilityTimeout) * time.Second)
		return map[string]string{}, nil
	}
	return nil, badRequest("UnsupportedOperation", "AmazonSQS.%s is not served by this endpoint", op)
}

// receive serves ReceiveMessage: the visible messages, oldest first, made invisible for the
// visibility timeout; with a wait time it long-polls until a message is visible or the wait
// (bounded by Options.MaxWait in real time) is over.
func (s *Server) receive(r *http.Request, url string, maxN, visibility, wait *int, attrNames []string) (any, *apiError) {
	n := 1
	if maxN != nil {
		n = *maxN
	}
	if n < 1 || n > 10 {
		return nil, badRequest("InvalidParameterValue", "Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", n)
	}
	if wait != nil && (*wait < 0 || *wait > 20) {
		return nil, badRequest("InvalidParameterValue", "Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", *wait)
	}
	if visibility != nil && (*visibility < 0 || *visibility > 43200) {
		return nil, badRequest("InvalidParameterValue", "Value %d for parameter VisibilityTimeout is invalid.", *visibility)
	}
	var deadline time.Time
	for {
		s.mu.Lock()
		s.syncLocked()
		q, err := s.queueFor(url)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if deadline.IsZero() {
			w := q.wait
			if wait != nil {
				w = time.Duration(*wait) * time.Second
			}
			deadline = time.Now().Add(min(w, s.opts.MaxWait))
		}
		vis := q.visibility
		if visibility != nil {
			vis = time.Duration(*visibility) * time.Second
		}
		now := s.opts.Clock.Now()
		var out []sqsReceived
		for _, m := range q.messages {
			if len(out) == n {
				break
			}
			if m.visibleAt.After(now) {
				continue
			}
			m.receives++
			if m.firstReceive.IsZero() {
				m.firstReceive = now
			}
			m.visibleAt = now.Add(vis)
			rm := sqsReceived{MessageID: m.id, ReceiptHandle: receiptHandle(m), MD5OfBody: m.md5, Body: m.body}
			if len(attrNames) > 0 {
				rm.Attributes = map[string]string{}
				all := map[string]string{
					"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
					"ApproximateReceiveCount":          strconv.Itoa(m.receives),
					"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
					"SenderId":                         s.opts.Account,
				}
				for k, v := range all {
					if contains(attrNames, "All") || contains(attrNames, k) {
						rm.Attributes[k] = v
					}
				}
			}
			out = append(out, rm)
		}
		notify := s.notify
		s.mu.Unlock()
		left := time.Until(deadline)
		if len(out) > 0 || left <= 0 {
			if out == nil {
				out = []sqsReceived{}
			}
			return map[string]any{"Messages": out}, nil
		}
		// Wake on a new message, or soon anyway: a message may become visible as the clock
		// moves, which nothing signals.
		t := time.NewTimer(min(left, 50*time.Millisecond))
		select {
		case <-r.Context().Done():
			t.Stop()
			return map[string]any{"Messages": []sqsReceived{}}, nil
		case <-notify:
		case <-t.C:
		}
		t.Stop()
	}
}
